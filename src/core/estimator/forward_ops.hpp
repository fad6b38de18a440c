// A forward pass op by op: every tensor transformers' modeling code and PyTorch's kernels allocate
// (outputs and temporaries), freed when the Python name holding it goes out of scope, as the
// allocator traces of docs/results/estimator-families-h200-2026-11-30/ show them. In training, the tensors autograd
// saves for backward (PyTorch's derivatives.yaml) stay alive in the layer's saved list instead.
// Shared by forward_attention.cpp (norms, RoPE, attention), forward_mlp.cpp (MLPs, experts, latent
// attention), forward_layer.cpp (a decoder layer, embeddings, masks, rotary tables), and the two
// sequences: infer_sequence.cpp and step_sequence.cpp.
#pragma once
#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/sequence.hpp"

namespace vramdoc::estimator::detail {

// One forward: the prefill or a training forward (q_len = seq), or a decoding step (q_len = 1).
struct Forward {
  // A forward of the run's batch and sequence at the run's widths.
  Forward(Tape& tape, const Run& run);

  Tape& s;
  const Run& r;
  u64 batch = 1, q_len = 1, kv_len = 1;  // sequences; new tokens of each; keys each attends to
  u64 act = 2;                           // matmul outputs (16-bit under autocast or in a 16-bit model)
  u64 wide = 2;                          // the residual stream (fp32 in fp32 and under autocast)
  bool amp = false, quantized = false;   // autocast; the layers' Linears dequantise their weights per call
  bool use_cache = true;                 // DynamicCache copies keys and values (not with gradient checkpointing)
  bool train = false;                    // autograd records: saved tensors stay (in `saved`) for the backward
  bool cast_at_call = false;             // training under autocast: each Linear's 16-bit weight copy made at its call
  bool casts_cached = true;              // autocast caches the copies (not Falcon's: a cast of weight.T, not a leaf)
  std::vector<u64> autocast_cache;       // copies autocast holds until it exits (a checkpointed forward's)
  u64 sliding_bool_mask = 0;             // SDPA with a window shorter than the prompt: the explicit bool mask
  std::vector<u64> saved;                // the current layer's saved tensors, in the order they were saved
  u64 memory = 0, memory_tokens = 0;     // encoder-decoders: the encoder's output, its tokens per sequence
  std::vector<u64> cross_cache;          // encoder-decoders: the cross-attention's cached keys and values (to the forward's end)
  u64 position_bias = 0;                 // T5: the stack's relative position bias (its first layer computes it)
  u64 cross_bias = 0;                    // T5: cross-attention's zeros bias (the decoder's first layer makes it)
  u64 stack_input = 0;                   // inference: a layer input held by its stack beyond the next layer (Swin's
                                         // stage input, to the stage's end; an encoder-decoder's decoder embeddings)
  u64 stage_reshaped = 0;                // Swin: the last stage's reshaped hidden states (held to the next stage's end)
  u64 hidden = 0;                        // the last layer's width where it is not hidden_size (Swin's last stage)
  u64 pixels = 0;                        // the caller's pixels or mel frames (made before the first step, never freed)
  std::vector<u64> layer_locals;         // inference: tensors a layer's Python locals hold to its return (DINOv2's
                                         // hidden_states_norm and self_attention_output)
  u64 returned_weights = 0;              // inference, BLOOM and GPT-J: the last block's returned attention weights,
                                         // which the model's loop (`outputs = block(...)`) holds until the next returns
  std::vector<u64> after_residual;       // BLOOM: its attention's locals, freed after the residual sum its forward makes
  // Training: a saved tensor's id -> the bytes of each of two tensors its op's backward makes at once beyond the
  // gradients (Mamba2's broadcast products: MulBackward0 returns both full-size input gradients before the engine's
  // sum_to reduces them to the inputs' shapes)
  std::unordered_map<u64, u64> backward_transients;
  u64 pending_workspace = 0;             // encoders: the cuBLAS workspace the first Linear's matmul makes (after its output)
  std::vector<u64> model_locals;         // CANINE: tensors CanineModel.forward's locals hold to its return (the 3-D
                                         // character mask, the initial character encoding, the upsampling's inputs)
  u64 self_output = 0;                   // inference, BERT-style encoders: the attention's output, which the layer's
                                         // attention module holds (self_outputs) through its output dense, sum and norm
  bool hold_intermediate = false;        // inference, BERT-style encoders: the MLP's activation (intermediate_output)
                                         // goes to layer_locals, held to the layer's end (BertLayer.feed_forward_chunk)
  u64 saved_mask = 0;                    // training: a mask every layer's SDPA saves (Falcon's ALiBi mask), alive to
                                         // the end of the layers' backward (the caller frees it)

  // The width of the last layer's output (the final norm's and the head's).
  u64 hidden_width() const { return hidden != 0 ? hidden : r.m.hidden_size; }

  u64 tokens() const { return saturating_mul(batch, q_len); }
  // Bytes of a tensor of `elements` per token at `width` bytes each.
  u64 bytes(u64 elements, u64 width) const { return saturating_mul(saturating_mul(tokens(), elements), width); }
  // Bytes of a batch x heads x q_len x kv_len matrix at `width`.
  u64 scores(u64 heads, u64 width) const {
    return saturating_mul(saturating_mul(saturating_mul(batch, heads), saturating_mul(q_len, kv_len)), width);
  }
  // Autograd saves `id` (training only; once).
  void keep(u64 id) {
    if (train && id != 0 && kept_.insert(id).second) saved.push_back(id), saved_anywhere_.insert(id);
  }
  // Training: the op that saved the last saved tensor makes two tensors of `bytes` at once in its backward (backward.cpp).
  void backward_transient(u64 bytes) {
    if (train && !saved.empty()) backward_transients[saved.back()] = std::max(backward_transients[saved.back()], bytes);
  }
  // Whether any layer of this forward saved `id` for the backward.
  bool saved_by_a_layer(u64 id) const { return saved_anywhere_.count(id) != 0; }
  void forget_saved() { saved_anywhere_.clear(); }
  // The forward lets go of `id`: freed unless autograd saved it.
  void drop(u64 id) {
    if (kept_.count(id) == 0) s.free(id);
  }
  void drop(std::vector<u64>& ids) {
    for (u64 id : ids) drop(id);
    ids.clear();
  }
  bool kept(u64 id) const { return kept_.count(id) != 0; }
  // Starts a new layer's saved list (the previous one was taken by the caller).
  std::vector<u64> take_saved() {
    kept_.clear();
    return std::move(saved);
  }
  // Every weight trains (full fine-tuning): Linears save their inputs, norms their normalised input.
  bool weights_train() const { return train && r.o.mode == Mode::Train; }
  // Under autocast in training, a Linear's 16-bit weight copy of `bytes` (made at the call, 0
  // otherwise): saved by the matmul, or (a checkpointed forward) held in autocast's cache.
  u64 weight_cast(u64 bytes) {
    if (!cast_at_call || bytes == 0) return 0;
    const u64 id = s.alloc(bytes, Use::Cast);
    if (train) keep(id); else if (casts_cached) autocast_cache.push_back(id);
    return id;
  }
  // After its matmul: a weight copy neither saved nor cached is freed.
  void release_cast(u64 id) {
    if (!casts_cached) drop(id);
  }

 private:
  std::unordered_set<u64> kept_, saved_anywhere_;
};

// A layer's widths on one tensor-parallel rank (heads and MLP channels divided by --tp).
struct LayerDims {
  u64 h, heads, kv_heads, head_dim, q, kv, inter, rotary;
};
LayerDims layer_dims(const Run& r);

// What the model holds from its start to its end: the embeddings' output, rotary tables, masks.
struct Prelude {
  std::vector<u64> held;
  u64 hidden = 0;  // the first layer's input
  bool hold_first_input = true;  // the model holds `hidden` to its end (not ALBERT's: its encoder's own projection)
};

// The layer's KV cache entries (keys, values; DeepSeek: the latent and the rotary key; a Mamba layer: its conv and
// ssm states), and a parallel layer's (Falcon-H1) Mamba states beside its keys and values (slots 2, 3).
using CacheIds = std::array<u64, 4>;

// Linear `name` (as PEFT names it) on input `x` of `in_elements` per token: under autocast an fp32
// input is cast to 16 bit first, a quantised weight is dequantised for the call, a LoRA target adds
// PEFT's adapter branch. Returns the output (the adapter's sum for a LoRA target).
u64 linear(Forward& f, u64 x, u64 in_elements, u64 out_elements, bool input_wide, const std::string& name);
// q * cos + rotate_half(q) * sin over `e` elements per token (forward_attention.cpp): the product, -x2 (half), the cat,
// rotate_half * sin, the sum (autograd saves only cos and sin); `xw` the input's width, `pw` the products' (fp32 when
// cos is: OLMo 2, autocast). Returns the sum.
u64 rope(Forward& f, u64 e, u64 xw, u64 pw);
// The family's norm over `elements` per token of input `x` (`in_width` bytes each): its output.
u64 norm(Forward& f, u64 x, u64 elements, u64 in_width);
// Attention of a decoder layer reading `input`: projections, RoPE, the cache update, the kernel and
// the output projection; returns o_proj's output. `held` receives tensors the layer keeps to its
// end (eager attention's probabilities, returned as attn_weights).
u64 attention(Forward& f, LayerKind kind, u64 input, bool input_wide, CacheIds& cache, u64& held);
// DeepSeek's multi-head latent attention (the cache keeps the compressed latent).
u64 latent_attention(Forward& f, u64 input, CacheIds& cache);
// The MLP (dense or mixture of experts) of a layer reading `input`: returns its output.
u64 mlp(Forward& f, LayerKind kind, u64 input, bool input_wide);
// Dropout in training (p > 0): a bool mask (saved) and the dropped copy, which replaces `x`.
u64 dropout(Forward& f, u64 x, u64 elements, u64 width, double p);
// The decoder families beyond the Llama template (forward_families.cpp):
// OPT's, Nemotron's and BLOOM's MLPs (0 for any other MlpKind).
u64 family_mlp(Forward& f, u64 x, u64 h, u64 inter, bool input_wide);
// BLOOM's ALiBi attention on the fused projection's keys and values `k`, `v` (the cache's copies when
// `cached`): the merged heads; `held` the probabilities kept to the layer's end, `locals` the tensors its
// forward holds to its end (after the residual sum).
u64 bloom_attention(Forward& f, const LayerDims& d, u64 k, u64 v, bool cached, u64& held, std::vector<u64>& locals);
// GPT-J's attention in fp32 on the rotated query `q`, keys `k` and values `v`: the merged heads.
u64 fp32_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held);
// Falcon with alibi (FalconModel.forward): the causal mask materialised, ALiBi / sqrt(head_dim) filled into it:
// one batch x heads x seq x seq mask in the embeddings' dtype, held to the forward's end (training: f.saved_mask).
void falcon_alibi_mask(Forward& f, Prelude& p);
// GPT-OSS's eager attention with sinks on q, k, v (`q_heads_major`: q already (batch, heads, seq, dim)): the context
// made contiguous; `held` the probabilities (attn_weights, kept to the layer's end).
u64 sink_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, bool q_heads_major, u64& held);
// Cohere's fp32 LayerNorm, Nemotron's LayerNorm1P and I-BERT's IntLayerNorm written out (as norm()).
u64 family_norm(Forward& f, u64 x, u64 elements, u64 in_width);
// A residual sum of `bytes` (Granite scales the branch first: one more tensor for a moment).
u64 residual_sum(Forward& f, u64 bytes);
// MPT's own eager attention with the ALiBi bias on q, k, v: the context; `held` its attn_weights.
u64 mpt_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held);
// XGLM's own eager attention (XGLMAttention.forward) on the scaled query `q`, keys `k`, values `v`: the context;
// `held` its attn_weights (the layer's `_`, alive to its return).
u64 xglm_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held);
// XGLMModel.forward's embeddings: the scaled lookup (inputs_embeds, held to the forward's end) plus the sinusoidal
// positions (a temporary), then dropout: the first layer's input.
void xglm_embeddings(Forward& f, Prelude& p);
// GPT-J's per-layer sin / cos tables (into `locals`: held to the attention's end).
void gptj_sincos(Forward& f, u64 rotary, std::vector<u64>& locals);
// Falcon's sequential layer (parallel_attn=False): its locals held to its end.
u64 falcon_sequential_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache);
// OPT's post-norm layer (do_layer_norm_before=false).
u64 post_norm_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache);
// Pegasus-X's encoder self-attention (forward_sparse.cpp): block-local with global tokens, one block more in a
// staggered layer, on the projections' outputs `qkv` (it frees them); the merged heads; `held` its local
// probabilities.
u64 global_local_attention(Forward& f, const LayerDims& d, bool staggered, const std::array<u64, 3>& qkv, u64& held);
// BigBird's block-sparse attention on the projections q, k, v (forward_sparse.cpp): the merged heads; `held`
// its dense attention_probs.
// LongT5's encoder (forward_longt5.cpp): local or transient-global attention over blocks of block_len tokens;
// `n` the attention's input, q / k / v its projections; returns the heads merged.
u64 longt5_local_attention(Forward& f, const LayerDims& d, u64 n, u64 q, u64 k, u64 v);
u64 block_sparse_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held);
// Longformer's (and LED's encoder's) sliding-chunk self-attention on the layer's projections (attention() frees
// them at its end; forward_longformer.cpp): the merged heads, contiguous for the output Linear.
u64 sliding_chunks_attention(Forward& f, const LayerDims& d);
// Models with an encoder (forward_encoders.cpp): the embeddings of the encoder's input (text,
// patches, mel frames) or, `decoder_side`, of an encoder-decoder's target tokens; the cuBLAS workspace
// `workspace` first (0: none).
Prelude encoder_prelude(Forward& f, u64 workspace, bool decoder_side);
// A decoder layer's cross-attention from `x` to the encoder's output `memory` of `memory_tokens`
// tokens per sequence: the output projection's output.
u64 cross_attention(Forward& f, u64 x, u64 memory, u64 memory_tokens);
// The task's head before its last Linear on the final hidden states `x`: the Linear's input in
// `logits_input` (MLM's transform, token classification's dropout, vision's final norm, or x), and
// the elements of its output (the logits).
u64 task_head(Forward& f, u64 x, u64& logits_input);
// T5 and its relatives (forward_t5.cpp): T5LayerNorm (as norm()); one T5Block: self-attention,
// cross-attention in a decoder layer, the feed-forward; its output.
u64 t5_norm(Forward& f, u64 x, u64 elements, u64 in_width);
u64 t5_block(Forward& f, LayerKind kind, u64 x, CacheIds& cache);
// Swin (forward_swin.cpp): one block of stage kind.stage at that stage's width and tokens (f.q_len),
// shifted windows every second block, the patch merging after a stage's last block; its output.
u64 swin_layer(Forward& f, LayerKind kind, u64 x);
// MambaBlock (forward_ssm.cpp): its RMSNorm, MambaMixer.slow_forward (no mamba-ssm / causal-conv1d kernels), the
// residual sum (fp32 with residual_in_fp32); its output. With a cache, its conv and ssm states go to `cache`.
u64 mamba_block(Forward& f, u64 x, CacheIds& cache);
// MambaMixer.slow_forward's softplus of `time_step` (kept by the caller, dropped here), discretisation and sequential
// scan over d channels of N states (forward_ssm.cpp): their tensors and scan_outputs join `locals`; returns
// scan_outputs. JambaMambaMixer's slow path shares it (forward_hybrid.cpp).
u64 mamba_scan(Forward& f, u64 time_step, u64 d, u64 N, std::vector<u64>& locals);
// Mamba2Block (forward_ssm2.cpp): Mamba2Mixer.torch_forward (the chunked SSD in prefill and training, the single-step
// recurrence in a decoding step), as mamba_block.
u64 mamba2_block(Forward& f, u64 x, CacheIds& cache);
// Mamba2Mixer.torch_forward alone (forward_ssm2.cpp) on a layer's normed input `n`, from in_proj to out_proj (whose
// output it returns): the mixer of Mamba2 hybrids (BambaMixer.torch_forward, modeling_bamba.py:651-796, is the same).
u64 mamba2_mixer(Forward& f, u64 n, CacheIds& cache);
// Falcon-H1's decoder layer: a Mamba2 mixer and attention side by side (forward_hybrid.cpp).
u64 parallel_mixer_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache);
// A hybrid's token mixer other than attention (forward_hybrid.cpp) on the layer's normed input `n`: LFM2's
// Lfm2ShortConv, Jamba's JambaMambaMixer; the output projection's output. Its conv / recurrent states go to `cache`.
u64 mixer_block(Forward& f, LayerKind kind, u64 n, CacheIds& cache);
// RecurrentGemma (forward_griffin.cpp): RecurrentGemmaRecurrentBlock on the layer's normed input `n` (linear_y / linear_x,
// the depthwise conv, the RG-LRU and its Python scan, linear_out): linear_out's output; its conv and recurrent states
// go to `cache`. window_cache: the attention's window-sized keys and values (_setup_cache, _update_cache) into `cache`.
// griffin_mask: RecurrentGemmaModel._update_causal_mask, held in `p`.
u64 recurrent_block(Forward& f, u64 n, CacheIds& cache);
void window_cache(Forward& f, const LayerDims& d, CacheIds& cache);
void griffin_mask(Forward& f, Prelude& p);
// JetMoE (forward_jetmoe.cpp): JetMoeAttention with its mixture of attention heads on the layer's normed input
// (JetMoeMoA.map's routed query projections, kv_proj, RoPE, the keys and values repeated per expert, the kernel,
// JetMoeMoA.reduce): its output; and JetMoeMoE on `x`: its output.
u64 moa_attention(Forward& f, LayerKind kind, u64 input, CacheIds& cache);
u64 jetmoe_moe(Forward& f, u64 x, u64 h);
// NLLB-MoE's sparse feed-forward (forward_nllb_moe.cpp): NllbMoeTop2Router and NllbMoeExperts on the layer's normed
// input `x`; the experts' summed output.
u64 nllb_sparse_mlp(Forward& f, u64 x, u64 h, u64 inter);
// Python gelu_new on `x` of `inter` elements per token (forward_mlp.cpp): its output.
u64 new_gelu(Forward& f, u64 x, u64 inter);
// The outputs of the model's head: the vocabulary (decoders, MLM, encoder-decoders) or the labels.
u64 head_outputs(const ModelConfig& m);
// The head's geometry: lm_head's input rows and width, and the tokens of the last layer's output
// (an encoder-decoder's target tokens, Swin's last stage's).
struct HeadShape {
  u64 rows = 0, width = 0, tokens = 0;
};
HeadShape head_shape(const Run& r);
// An encoder-decoder after its encoder's last layer (output `x`): the encoder's final norm (pre-norm
// families), kept as f.memory (in p.held), the forward switched to the target tokens, the decoder's
// embeddings; returns the first decoder layer's input.
u64 to_decoder(Forward& f, Prelude& p, u64 x);
// The logits' elements of the run's task (the whole vocabulary under --tp) and whether its loss upcasts them to fp32 (transformers'
// loss_function does; BERT-style heads, T5, BART and Whisper call CrossEntropyLoss on them as they are).
// `autocast_nll`: under autocast, CrossEntropyLoss on 16-bit logits (not fp32, no fp32 bias sum before it):
// cross_entropy_loss, on none of CUDA autocast's lists, runs its decomposition with autocast on: log_softmax keeps the
// logits' 16 bit (it is given their dtype), nll_loss (on the fp32 list) casts the log-probabilities to fp32 and saves
// that copy (torch/csrc/autograd's LossNLL, autocast_mode.cpp; the whisper-s amp trace's 106 + 212 MB at the loss).
struct LossShape {
  u64 elements = 0;
  bool fp32 = true;
  bool autocast_nll = false;
};
LossShape loss_shape(const Run& r);
// One decoder layer reading `x` (the caller frees `x` unless saved): its output.
u64 decoder_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache);
// Each layer's kind in model order: dense layers first, sliding layers as layer_types lists them.
std::vector<LayerKind> layer_order(const ModelConfig& m);
// FNetLayer (forward_mixing.cpp): the Fourier transform's real part added to `x`, its LayerNorm, the feed-forward;
// its output.
u64 fourier_layer(Forward& f, LayerKind kind, u64 x);
// A post-norm encoder layer's feed-forward half on its attention output `a` (forward_mixing.cpp): the MLP, dropout,
// LayerNorm(a + it) (the sum saved); `a` dropped. FNet's and Funnel's layers end in it.
u64 post_norm_ffn(Forward& f, LayerKind kind, u64 a);
// Nystromformer's self-attention (forward_mixing.cpp) on the projections (value `v`): the merged heads.
u64 nystrom_attention(Forward& f, const LayerDims& d, u64 v);
// Funnel (forward_funnel.cpp): its layers in model order (LayerKind::stage the block, 255 FunnelDecoder's;
// shifted: the block's pooling layer; stage_end: the decoder's first, upsampling layer) and one FunnelLayer.
std::vector<LayerKind> funnel_layer_order(const ModelConfig& m);
u64 funnel_layer(Forward& f, LayerKind kind, u64 x);
// CANINE (forward_canine.cpp): its layers in model order (LayerKind::stage 0 the initial character layer, which
// ends in the downsampling; 1 the deep encoder's, stage_end on its last with sequence classification: the final
// character stack as a forward-only tail; 2 the final character layer, which starts with the upsampling) and one of them.
std::vector<LayerKind> canine_layer_order(const ModelConfig& m);
u64 canine_layer(Forward& f, LayerKind kind, u64 x);

// Embeddings, masks, rotary tables; the cuBLAS workspace appears at the first matmul (`workspace`
// is its size, 0 when an earlier step made it).
Prelude prelude(Forward& f, const std::vector<LayerKind>& kinds, u64 workspace);
// One decoding step's work for a layer that allocates more than a few MiB: the cache grows by the
// new token (a sliding-window layer keeps its window), DeepSeek decompresses its whole latent
// cache, routed experts gather their weights per token.
void decode_layer(Forward& f, LayerKind kind, CacheIds& cache);

// Training: one layer's forward with autograd recording (the autocast copies `casts` no Linear
// call makes first), its
// saved tensors into `saved`, the cache entries autograd does not keep into `cache`; the output.
u64 recorded_layer(Forward& f, const std::vector<u64>& casts, LayerKind kind, u64 x, std::vector<u64>& saved,
                   std::vector<u64>& cache);
// Training with gradient checkpointing: the layer's forward with nothing saved; the output. Its
// autocast copies go to f.autocast_cache (freed when autocast exits: loss_and_its_gradient).
u64 checkpointed_layer(Forward& f, const std::vector<u64>& casts, LayerKind kind, u64 x);
// What one decoder layer's backward makes (backward.cpp): its weights' gradients in bytes, per
// tensor, and whether each arrives through a 16-bit autocast copy; the residual gradient's bytes;
// the autocast copies a recomputed layer makes at its start (those no Linear call makes).
struct LayerGrads {
  std::vector<u64> weights;
  std::vector<bool> via_cast;
  std::vector<u64> unlinked_casts;
  u64 residual = 0;
};
// Training: one layer's backward. A checkpointed layer (`checkpoint`: its input, 0 when recorded)
// is run again first; the gradient of its input is allocated, the saved tensors' gradients made
// and freed with them, the weight gradients appended to `made`; then `dx` (the gradient of the
// layer's output) and the checkpoint are freed. Returns the gradient of the layer's input.
u64 layer_backward(Forward& f, const LayerGrads& g, LayerKind kind, u64 checkpoint, std::vector<u64>& saved, u64 dx,
                   std::vector<u64>& made);
// What the backward makes outside the layers: lm_head's weight gradient (a tied one has the
// embeddings' shape; 0: it does not train), whether it arrives as the 16-bit gradient of its
// autocast copy first, the head's other gradients (the final norm's, lm_head's bias), the
// embeddings', the gradient of lm_head's input (16-bit under autocast) and the residual stream's.
struct OuterGrads {
  std::vector<u64> head, embed;
  u64 lm_head = 0;
  bool lm_head_via_cast = false, tied = false;
  bool input_first = false;  // lm_head has a bias: addmm's backward makes the input's gradient first (mm's the weight's)
  u64 head_input = 0, residual = 0;
};
// The backward's gradients outside the layers, from the trainable weights' gradients `grads`
// (`tied`: lm_head shares the embeddings' weight; `amp`: autocast), the bytes of the gradient of
// lm_head's input and of the residual stream's.
OuterGrads outer_grads(const WeightTensors& grads, bool tied, bool amp, u64 head_input, u64 residual);
// An encoder-decoder's tied embedding: the decoder's embeddings' gradient added out of place to
// lm_head's share `tied_share` (which becomes the sum), between the decoder's and the encoder's layers.
void decoder_embeddings_backward(Tape& s, const OuterGrads& g, u64& tied_share);
// Training: the backward through the head, as the traces order it: lm_head's weight gradient
// (under autocast its 16-bit one), the cuBLAS workspace `workspace` (0: none; the first step's
// second), the gradient of lm_head's input (with a bias: the input's first); the loss's
// gradient `loss` and the head's saved
// tensors freed; the residual gradient (under autocast the input's gradient cast to fp32) and the
// fp32 weight gradient; the head's other gradients. Gradients go to `made`, a tied lm_head's to
// `tied_share` (the embeddings' gradient is added to it in place). Returns the gradient of the
// last layer's output.
u64 head_backward(Tape& s, const OuterGrads& g, u64 loss, std::vector<u64>& head_saved, u64 workspace,
                  std::vector<u64>& made, u64& tied_share);
// Training: the backward through the embeddings: their saved tensors freed, their gradients
// appended to `made`, the last residual gradient `dx` freed. A tied weight's gradient meets lm_head's share
// in the engine's input buffer: added in place where the share is a tensor of its own (under autocast the
// cast's fp32 gradient; `share_is_sum`: an encoder-decoder's earlier sum), else out of place - lm_head's
// share, the embeddings' gradient and their sum alive at once (gemma-2b bf16 / fp32 and gemma2-s bf16 /
// fp32 train traces; in place in gemma2-s / gemma2-m amp-bf16).
void embeddings_backward(Tape& s, const OuterGrads& g, std::vector<u64>& saved, u64 tied_share, u64 dx,
                         std::vector<u64>& made, bool share_is_sum = false);
// Whether the last layer's output goes through a final norm over every token before the head: pre-norm layers
// have one, post-norm ones (BERT, OPT-350m) none, nor CLIP's vision tower (its post_layernorm reads the class token
// alone, for the pooled output the image classifier does not read).
inline bool final_norm_over_tokens(const ModelConfig& m) { return !m.post_norm && !m.enc.pre_layernorm; }
// lm_head's input from the final norm's output `normed`: OPT's project_out when word_embed_proj_dim
// differs from the hidden size, else `normed` itself.
u64 head_input(Forward& f, u64 normed);
// Training: the final norm and lm_head's input (and its autocast copy), freeing the last layer's
// output unless saved; returns the saved tensors.
std::vector<u64> record_head(Forward& f, u64 x, u64 lm_head_cast);
// Training: the loss on lm_head's output (`logits_act` bytes): soft-capping's tanh (`softcap`
// bytes, 0: none), the fp32 copy and log_softmax (saved); autocast exits (`autocast_cache` freed);
// backward's fp32 gradients, then the 16-bit gradient of the logits, which is returned (0 when
// the logits are fp32).
// `biased`: BART's lm_logits + final_logits_bias (its bytes; 0: none), the loss's input. `scaled`: Cohere's
// logits * logit_scale, Granite's logits / logits_scaling (its bytes; 0: none), the loss's input, whose backward
// makes one more logits-sized gradient (trace 009-cohere-s of 2026-12-02: modeling_cohere.py:503).
// `nll_cast`: LossShape::autocast_nll's fp32 copy of the 16-bit log-probabilities (its bytes; 0: none), saved by
// nll_loss; its backward's fp32 gradient is cast back to 16 bit for log_softmax's. `first_stream`: ProphetNet's
// `predict_logits[:, 0].contiguous()` (its bytes; 0: none), made before the loss; with it the logits themselves
// (`predict_logits`) stay alive beside the loss's copy of them until the model's forward returns
// (modeling_prophetnet.py ProphetNetForConditionalGeneration.forward, _compute_loss).
u64 loss_and_its_gradient(Tape& s, u64 logits_act, u64 logits_fp32, u64 softcap, std::vector<u64>& autocast_cache,
                          u64 biased = 0, u64 scaled = 0, u64 nll_cast = 0, u64 first_stream = 0);

// The weights, tensor by tensor (embeddings, layers, head), as loaded.
void allocate_weights(Sequence& s, const Run& r);
// A tied lm_head built on the GPU: its own weight, freed when post_init() ties it.
void release_tied_head(Tape& s, const Run& r, u64 element_width);
// Inference: the weights, the prefill op by op, generate()'s decoding steps (--new-tokens).
void inference_events(Sequence& s, const Run& r);
// Training: the weights, then three steps (forward, loss, backward, optimizer: each its Stage).
void training_events(Sequence& s, const Run& r);

}  // namespace vramdoc::estimator::detail
