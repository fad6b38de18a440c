// A decoder-only language model as the estimator sees it: the few config.json fields that size
// its tensors. Read from Hugging Face config.json text, a preset, or a model directory.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/estimator/cnn_parts.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// The architecture families whose tensors and saved activations are described in architecture.cpp.
// Generic: an unknown model_type estimated as a llama-style decoder (with a warning); FromHeaders:
// an unknown model_type whose tensors come from its safetensors headers.
enum class Family {
  Llama, Mistral, Qwen2, Qwen3, Gemma, Phi3, Gpt2, Mixtral, Gemma2, Gemma3, Qwen2Moe, Qwen3Moe, DeepseekV2,
  DeepseekV3, Olmo2, Phi, Falcon, GptNeox, Starcoder2, Bloom, Gptj, Opt, Cohere, Granite, Olmoe, Smollm3, Glm4,
  Nemotron, GptBigcode, GraniteMoe, Codegen, Mpt, Phimoe, Biogpt, Xglm, RecurrentGemma, JetMoe, Bert, Roberta, DistilBert, DebertaV2, Vit, Swin, T5, Bart,
  Whisper, Cnn, Mamba, GptOss, Ernie45, Glm, Llama4, HunyuanMoe, OpenaiGpt, Generic, FromHeaders
};

// GPT-2's layout (wte + wpe, LayerNorms, fused c_attn, c_fc / c_proj, dropout): GPT-2, GPT-BigCode (multi-query) and
// OpenAI GPT (post-norm blocks, no final norm, its own eager attention, no KV cache).
inline bool gpt2_style(Family f) { return f == Family::Gpt2 || f == Family::GptBigcode || f == Family::OpenaiGpt; }
// GPT-J's layout (one ln_1 for attention and MLP side by side, fp32 _attn, partial interleaved RoPE, fc_in / fc_out,
// lm_head with bias): GPT-J and CodeGen (a fused qkv_proj).
inline bool gptj_style(Family f) { return f == Family::Gptj || f == Family::Codegen; }

// RmsFp32Weight: weight applied in fp32 (Gemma, OLMo 2); LayerNormFp32: Cohere's LayerNorm written out in
// fp32 (mean, variance, each step a tensor); LayerNorm1P: Nemotron's (1 + weight), run in the autocast dtype.
enum class NormKind { Rms, RmsFp32Weight, LayerNorm, LayerNormFp32, LayerNorm1P, T5 };  // T5: T5LayerNorm
// act(gate)*up; fc1 -> C++ gelu -> fc2; Python gelu_new; fc1 -> relu -> fc2 (OPT); up -> relu^2 -> down
// (Nemotron); BLOOM's tanh gelu (an autograd Function that saves only its input in training); up -> xIELU -> down
// (Apertus: XIELUActivation's Python path, activations.py).
enum class MlpKind { Gated, Gelu, NewGelu, Relu, Relu2, BloomGelu, Xielu, QuickGelu };  // QuickGelu: ACT2FN's quick_gelu
enum class QkNorm { None, PerHead, Full };              // q/k RMSNorm over head_dim (Qwen3, Gemma 3) or whole (OLMo 2)
// A hybrid decoder's token mixer per layer (hybrid_config.cpp): attention, LFM2's short convolution (Lfm2ShortConv),
// Jamba's Mamba layer (JambaMambaMixer), RecurrentGemma's recurrent block (RecurrentGemmaRecurrentBlock: the RG-LRU).
// Parallel: Falcon-H1's layer, a Mamba2 mixer and attention side by side on one norm's output, their outputs summed.
enum class Mixer : std::uint8_t { Attention, ShortConv, Mamba, Recurrent, Parallel };

// Multi-head latent attention (DeepSeek V2/V3): the low-rank projections' widths.
struct LatentAttention {
  std::uint64_t q_lora_rank = 0;  // 0: a plain q_proj
  std::uint64_t kv_lora_rank = 0;
  std::uint64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

// What the model is: a decoder-only language model, an encoder (BERT, RoBERTa, DistilBERT, DeBERTa-v2),
// an encoder-decoder (T5, BART, Whisper), a vision transformer (ViT, Swin) or a convolutional classifier (cnn.hpp).
enum class ModelKind { Decoder, Encoder, EncoderDecoder, Vision, Cnn };

// What the model is trained or run for (the head on top and its loss): --task.
enum class Task { CausalLm, SeqCls, TokenCls, Mlm, Seq2Seq, ImageCls, SpeechSeq2Seq };

// The sizes an encoder, an encoder-decoder or a vision model adds to the decoder's fields.
struct EncoderParts {
  std::uint64_t type_vocab = 0;        // token type embeddings' rows (BERT 2, RoBERTa 1, DistilBERT none)
  std::uint64_t labels = 2;            // a classification head's outputs (num_labels or id2label)
  std::uint64_t image_size = 0, patch_size = 0, channels = 3;  // vision: the config's input and patches
  std::uint64_t encoder_layers = 0;    // encoder-decoder: the encoder's layers (num_layers: the decoder's)
  std::uint64_t encoder_ffn = 0;       // encoder-decoder: the encoder's MLP width (intermediate_size: the decoder's)
  std::uint64_t source_positions = 0;  // Whisper: the encoder's positions (2 x as many mel frames go in)
  std::uint64_t mel_bins = 0;          // Whisper: the input features' channels
  std::uint64_t relative_buckets = 0;  // DeBERTa (2 x position_buckets rows), T5 (per head) relative positions
  std::vector<std::uint64_t> stage_depths;  // Swin: layers per stage (width doubles, tokens / 4 per stage)
  std::vector<std::uint64_t> stage_heads;   // Swin: heads per stage
  std::uint64_t window = 0;            // Swin: window size
  bool cosine_attention = false;       // Swin V2: eager cosine attention with logit_scale and a continuous position
                                       // bias MLP per layer (no bias table; key without bias)
  bool pooler = false;                 // seq-cls: a dense + tanh pooler on the first token (BERT, DeBERTa)
  bool classifier_dense = false;       // seq-cls: RoBERTa's / DistilBERT's dense before the classifier
  bool gated_ffn = false;              // T5 v1.1 / Flan: gated-gelu feed-forward
  std::uint64_t experts = 0;           // Switch Transformers: each sparse layer's feed-forward is this many experts
                                       // (SwitchTransformersSparseMLP: a top-1 router, experts of d_ff each); 0: dense
  std::uint64_t sparse_encoder_layers = 0, sparse_decoder_layers = 0;  // Switch: the layers with experts per stack
  std::uint64_t expert_capacity = 0;   // NLLB-MoE (NllbMoeTop2Router): each expert's tokens in training (0: 2 x
                                       // ceil(tokens / experts)); in inference moe_eval_capacity_token_fraction x tokens
  double eval_capacity_fraction = 1.0; // NLLB-MoE: moe_eval_capacity_token_fraction
  double expert_token_dropout = 0.0;   // NLLB-MoE: moe_token_dropout (each expert's output, in training)
  std::uint64_t ngram = 0;             // ProphetNet: the decoder's predicting streams (ngram): the decoder runs on (1 + ngram)
                                       // x target tokens (the main stream and each predicting one), lm_head and the loss on
                                       // ngram x target
  std::uint64_t beams = 1;             // encoder-decoders: the config's num_beams (FSMT's 5), which generate() takes: beam
                                       // search expands the encoder's output and runs the decoder on batch x beams
  bool logits_bias = false;            // BART and its relatives: lm_logits + final_logits_bias (a buffer), a logits-sized sum
  std::uint64_t class_tokens = 1;      // ViT: the class token before the patches (DeiT: and its distillation token)
  bool mean_pooled = false;            // image-cls: the classifier reads the mean over the tokens (SigLIP), not the first
  bool patch_bias = true;              // ViT: the patch Conv2d's bias (CLIP's has none)
  bool pre_layernorm = false;          // CLIP's vision tower (CLIPVisionTransformer): pre_layrnorm on the embeddings before
                                       // the layers; its post_layernorm reads the class token alone (the pooled output,
                                       // unused by CLIPForImageClassification): no final norm over the tokens
  bool attention_pool_head = false;    // SigLIP's vision tower: SiglipMultiheadAttentionPoolingHead's weights (it runs,
                                       // its pooler_output unused by the image classifier)
  bool positions_buffer = false;       // M2M100: the sinusoidal positions are a buffer, not a parameter
  bool position_table = true;          // text encoders: absolute position embeddings (DeBERTa: position_biased_input)
  bool relative_norm = false;          // DeBERTa-v2: LayerNorm of the relative embeddings
  bool position_projections = false;   // DeBERTa without share_att_key: the relative embeddings' own key and
                                       // query Linears per layer (v1 pos_proj, pos_q_proj)
  bool relative_attention = false;     // DeBERTa: relative_attention (the disentangled terms and their tables run)
  bool c2p = false, p2c = false;       // DeBERTa: pos_att_type's content->position and position->content terms
  bool scores_plus_zero = false;       // DeBERTa v1: `attention_scores + rel_att` also when rel_att is the int 0
  bool fused_in_proj = false;          // DeBERTa v1: in_proj (q, k, v in one Linear, no bias), q_bias and v_bias
  bool deberta_layer_norm = false;     // DeBERTa v1: DebertaLayerNorm (fp32 statistics op by op, cast, weight, bias)
  std::uint64_t embedding_size = 0;    // ELECTRA / ALBERT: the embeddings' width when it differs from hidden_size
                                       // (embeddings_project / embedding_hidden_mapping_in maps it); 0: hidden_size
  std::uint64_t source_vocab = 0;      // FSMT: the encoder's own embeddings (src_vocab_size; vocab_size is the target's)
  std::uint64_t mlm_width = 0;         // RemBERT: the MLM head's width (output_embedding_size: dense, LayerNorm, decoder);
                                       // 0: the embeddings' width
  bool norm_bias = true;               // LayerNorms with a bias (ModernBERT's norm_bias: false)
  bool attention_locals_held = false;  // DINOv2 (Dinov2Layer.forward): the norm's and the attention's outputs are locals,
                                       // alive to the layer's return
  bool eager_by_default = false;       // a stand-in of an unknown encoder / encoder-decoder: transformers' eager
                                       // attention unless --attention says otherwise (most such classes have no
                                       // SDPA path: Megatron-BERT, RemBERT, ConvBERT, Funnel, MVP, NLLB-MoE, ...)
  bool own_eager_attention = false;    // RoFormer (RoFormerSelfAttention): always its own eager attention, softmax in the
                                       // scores' dtype, attention dropout's mask and output saved
  bool sinusoidal_rotary_table = false;  // RoFormer: RoFormerSinusoidalPositionalEmbedding, max_positions x head_dim (frozen)
  bool batched_position_bias = false;  // MPNet: the relative position bias made once per forward, (batch, heads, seq,
                                       // seq) contiguous, added in place to every layer's eager scores
  bool layer_scale = false;            // each residual branch times a learned per-channel scale before the sum
                                       // (DINOv2's layerscale_value, BEiT's / Data2Vec-vision's layer_scale_init_value)
  std::uint64_t attention_window = 0;  // Longformer / LED's encoder: sliding-chunk self-attention over attention_window
                                       // tokens (the largest layer's), with query_global / key_global / value_global
  std::uint64_t local_block = 0;       // Pegasus-X's encoder: block-local attention over block_size tokens, each block
  std::uint64_t global_tokens = 0;     // also attending to num_global_tokens global tokens (which attend to all);
  bool stagger_blocks = false;         // every second layer's blocks shifted by half a block (stagger_local_blocks)
  std::uint64_t local_block_len = 0;    // LongT5's encoder: blocks of local_radius + 1 tokens, each attending to its own
  std::uint64_t global_block_size = 0; // and both neighbours; transient-global: + one aggregate per global_block_size tokens
  std::uint64_t sparse_block = 0;      // BigBird: attention_type block_sparse over blocks of block_size tokens, with
  std::uint64_t random_blocks = 0;     // num_random_blocks random blocks per query block (above (5 + 2 r) blocks)
  bool project_in_encoder = false;     // ALBERT: embedding_hidden_mapping_in is the encoder's first op (the model
                                       // holds the narrow embeddings to its end, the projection goes after layer 1)
  bool rope_upcast_inline = false;     // with rope_fp32: (q.float() * cos) + (rotate_half(q.float()) * sin), each
                                       // upcast a temporary of its own, q's rotation before k's (ModernBERT)
  bool mlm_loss_fp32 = false;          // the MLM loss through transformers' loss_function (logits.float(): ModernBERT),
                                       // not CrossEntropyLoss on the logits as they are (BERT)
  std::uint64_t shared_layers = 0;     // ALBERT: distinct layers (num_hidden_groups x inner_group_num), each applied
                                       // num_layers / shared_layers times in a row; 0: every layer its own
  // Round 8, text encoders (encoder_mixing.cpp reads them):
  bool fourier_mixing = false;         // FNet: tokens mixed by fftn(hidden, dim=(1, 2)).real, no attention weights
  bool embeddings_projection = false;  // FNet: a Linear(hidden, hidden) after the embeddings' LayerNorm
  bool pooler_always = false;          // FNet, LayoutLM: the base model builds (and runs) its pooler for every task
  bool interface_eager = false;        // a stand-in whose class runs transformers' eager_attention_forward (fp32 softmax)
                                       // with no SDPA path (LayoutLM, MarkupLM), not a hand-written attention
  bool mlm_transform = true;           // the MLM head's dense + act + LayerNorm before the decoder (Funnel: none)
  std::vector<std::uint64_t> pooled_blocks;  // Funnel: layers applied per block (block_sizes x block_repeats); the
                                       // sequence pooled by 2 before each block after the first
  std::uint64_t upsampling_layers = 0; // Funnel: FunnelDecoder's layers at the full length (FunnelModel's tasks)
  bool pool_q_only = true;             // Funnel: the pooling layer's keys and values over the unpooled sequence
  bool separate_cls = true;            // Funnel: the first token kept out of the pooling
  bool truncate_seq = true;            // Funnel: the last token dropped before pooling (with separate_cls)
  std::uint64_t layout_positions = 0;  // LayoutLM: max_2d_position_embeddings rows of the x / y / h / w tables
  std::uint64_t layout_coordinate = 0; // LayoutLMv3: x / y tables coordinate_size wide, h / w shape_size, concatenated
  std::uint64_t layout_shape = 0;      //   (0: LayoutLM's hidden-wide tables, added)
  std::uint64_t rel_1d_bins = 0;       // LayoutLMv3: rel_pos_bins of the 1-D relative bias (0: none)
  std::uint64_t rel_2d_bins = 0;       // LayoutLMv3: rel_2d_pos_bins of the x and y relative biases (0: none)
  bool cogview_attention = false;      // LayoutLMv3: its eager attention (the biases added, PB-Relax's softmax)
  std::uint64_t xpath_depth = 0, xpath_unit = 0;  // MarkupLM: max_depth tag and subscript tables of xpath_unit_hidden_size
  std::uint64_t xpath_tags = 0, xpath_subs = 0;   // and their rows; the xpath FFN (xpath_unitseq2_inner, inner2emb)
  std::uint64_t shape_embed = 0, shape_vocab = 0;  // RoCBert: shape_embed_dim wide shape_embed (shape_vocab_size rows)
  std::uint64_t pronunciation_embed = 0, pronunciation_vocab = 0;  // RoCBert: pronunciation_embed (0: enable_* false)
  bool shape_used = false, pronunciation_used = false;  // RoCBert: enable_shape / enable_pronunciation with concat_input
  std::uint64_t concat_width = 0;      // RoCBert: map_inputs_layer's input (word + the used tables; 0: no concat_input)
  std::uint64_t entity_vocab = 0, entity_embed = 0;  // LUKE: entity_vocab_size rows of entity_emb_size (0: none)
  bool entity_aware = false;           // LUKE: use_entity_aware_attention (w2e / e2w / e2e queries in every layer)
  std::uint64_t landmarks = 0;         // Nystromformer: num_landmarks (segment means of q and k)
  std::uint64_t landmark_conv = 0;     // Nystromformer: conv_kernel_size of the depthwise conv over the values (0: none)
  std::uint64_t segment_means = 0;     // Nystromformer: segment_means_seq_len (equal to num_landmarks: dense attention)
  bool always_cached = false;          // XLM: XLMModel.forward builds an EncoderDecoderCache on every call; each layer's
                                       // keys and values are copied into it (held to the forward's end)
  // Round 9, text encoders (encoder_mixing.cpp reads them):
  std::uint64_t hash_functions = 0;    // CANINE: num_hash_functions tables of num_hash_buckets x hidden / functions
                                       // (concatenated into the characters' embeddings; 0: not CANINE)
  std::uint64_t downsampling_rate = 0; // CANINE: CharactersToMolecules' Conv1d kernel and stride
  std::uint64_t upsampling_kernel = 0; // CANINE: ConvProjection's Conv1d kernel (2 x hidden -> hidden)
  std::uint64_t local_stride = 0;      // CANINE: the initial character layer's chunks (local_transformer_stride)
  std::uint64_t deep_layers = 0;       // CANINE: the deep encoder's layers over the molecules (num_hidden_layers)
  bool int_layer_norm = false;         // I-BERT: IntLayerNorm's float path, op by op in the input's dtype (quant_modules.py)
};

// A selective state-space layer (Mamba, FalconMamba: MambaMixer in modeling_mamba.py) in place of attention and MLP.
struct SsmParts {
  std::uint64_t inner = 0;        // intermediate_size (expand x hidden_size): in_proj makes 2 x this (x and the gate)
  std::uint64_t state = 16;       // state_size: N of the discretised A and B, (batch, inner, seq, N) each
  std::uint64_t conv_kernel = 4;  // conv_kernel: the causal depthwise conv1d's width (padding kernel - 1)
  std::uint64_t dt_rank = 0;      // time_step_rank: x_proj's time-step columns, dt_proj's input
  bool conv_bias = true;          // use_conv_bias
  bool proj_bias = false;         // use_bias: in_proj and out_proj biases
  bool residual_fp32 = true;      // residual_in_fp32: MambaBlock's residual (and so the layers' outputs) in fp32
  bool bc_norm = false;           // FalconMamba: rms_forward on B, C and the time step (no weight)
  bool dt_bc_norms = false;       // Jamba: JambaRMSNorm (with a weight) on the time step, B and C (dt_layernorm, ...)
  // Mamba2 (Mamba2Mixer, modeling_mamba2.py): multi-head SSD over chunks; heads 0 for Mamba / FalconMamba
  std::uint64_t heads = 0;        // num_heads (heads x head_dim = inner)
  std::uint64_t head_dim = 0;     // head_dim
  std::uint64_t groups = 1;       // n_groups: B and C per group (conv_dim = inner + 2 x groups x state)
  std::uint64_t chunk = 256;      // chunk_size: the SSD's chunks (the sequence padded to a multiple)
  bool gated_norm = true;         // the gated RMSNorm before out_proj (Falcon-H1's mamba_rms_norm false: y * silu(gate))
  bool mup_scaled = false;        // Falcon-H1: input * ssm_in_multiplier before in_proj, in_proj's output * mup_vector
};

// A weight tensor read from a safetensors header (model directories).
struct HeaderTensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;  // as stored (dtype width; packed quantised weights as stored)
  bool floating = true;     // F32 / F16 / BF16: loaded at the run's precision; else kept as stored
};

// How the checkpoint's weights are stored when they are quantised (config.json quantization_config).
enum class QuantMethod { None, Fp8, Gptq, Awq, Bnb4bit, Bnb8bit, CompressedTensors };

struct Quantization {
  QuantMethod method = QuantMethod::None;
  std::uint64_t bits = 16;          // bits per quantised weight
  std::uint64_t group_size = 128;   // elements per scale (GPTQ/AWQ group, bnb 4-bit block is 64)
  bool double_quant = false;        // bitsandbytes bnb_4bit_use_double_quant
  std::string name;                 // as config.json says, for messages
};

// The most decoder layers a config may have: the estimate simulates each layer op by op, so a
// config saying 1e9 took 9 GB in 30 s and kept growing. The largest published models have ~200.
inline constexpr std::uint64_t kMaxLayers = 1024;

struct ModelConfig {
  std::string name;                // a preset name, or the file it was read from
  std::string model_type;          // as config.json says (e.g. "qwen2")
  Family family = Family::Generic;
  ModelKind kind = ModelKind::Decoder;
  Task task = Task::CausalLm;           // the head the weights include (estimate() sets it from Options::task)
  EncoderParts enc;                     // encoders, encoder-decoders, vision models
  CnnParts cnn;                         // convolutional classifiers (kind Cnn)
  SsmParts ssm;                         // state-space models (family Mamba)
  std::uint64_t hidden_size = 0;
  std::uint64_t num_layers = 0;
  std::uint64_t num_heads = 0;
  std::uint64_t num_kv_heads = 0;
  std::uint64_t head_dim = 0;           // explicit in the config, or hidden_size / num_heads
  std::uint64_t rotary_dims = 0;        // elements of each head RoPE rotates (partial_rotary_factor, rotary_pct); 0: no RoPE
  std::uint64_t intermediate_size = 0;
  std::uint64_t vocab_size = 0;
  std::uint64_t max_positions = 0;      // learned position table rows (gpt2 only), else 0
  std::uint64_t sliding_window = 0;     // 0: every layer attends to the whole sequence
  std::uint64_t sliding_layers = 0;     // layers that use the window (Gemma 2/3 alternate; else all)
  std::vector<bool> layer_sliding;      // per layer, from layer_types when given (its order); empty: by sliding_layers
  std::uint64_t num_experts = 0;        // mixture of experts: routed experts per layer (0: dense)
  std::uint64_t experts_per_token = 0;
  std::uint64_t moe_intermediate_size = 0;     // each routed expert's width (intermediate_size if 0)
  std::uint64_t shared_expert_intermediate = 0;  // the always-on shared expert's width (0: none)
  bool shared_expert_gate = false;      // Qwen2-MoE: sigmoid(Linear(h, 1)) scales the shared expert
  bool dense_experts = false;           // Llama 4: every routed expert runs over every token (Llama4TextMoe: the
                                        // tokens repeated per expert, times their sigmoid scores, one batched bmm)
  std::uint64_t dense_layers = 0;       // MoE models: layers with a dense MLP (first_k_dense_replace, mlp_only_layers)
  bool tie_word_embeddings = false;
  bool generate_with_cache = true;     // config.json use_cache: generate() keeps a KV cache (false: each step runs the whole sequence)
  bool attention_bias = false;          // q/k/v projections carry a bias (qwen2 always)
  bool output_bias = false;             // the attention output projection carries a bias
  bool mlp_bias = false;
  bool lm_head_bias = false;            // Phi
  bool fused_qkv = false;               // one Linear makes q, k and v (Phi-3, Falcon, GPT-NeoX)
  bool kv_broadcast_to_heads = false;   // Falcon 40B/180B: keys and values copied to every query head
  bool parallel_residual = false;       // attention and MLP read the same input (Phi, Falcon, GPT-NeoX)
  bool shared_norm = false;             // parallel residual with one norm for both (Phi, Falcon 7B)
  bool sandwich_norms = false;          // norms after attention and MLP too (Gemma 2/3)
  bool post_norms_only = false;         // norms after the sublayers only (OLMo 2)
  NormKind norm = NormKind::Rms;
  MlpKind mlp = MlpKind::Gated;
  QkNorm qk_norm = QkNorm::None;
  LatentAttention mla;                  // DeepSeek V2/V3 (kv_lora_rank > 0)
  double attn_logit_softcap = 0.0;      // Gemma 2: tanh soft-capping of attention scores (eager)
  double final_logit_softcap = 0.0;     // Gemma 2: of the logits
  double attention_dropout = 0.0;       // > 0 in training keeps dropout masks alive (gpt2)
  double residual_dropout = 0.0;
  double activation_dropout = 0.0;      // encoder-decoders: dropout after the feed-forward's activation (activation_dropout)
  // Decoder families beyond the Llama template (transformers 5.17 modeling_*.py; docs/estimator.md):
  std::uint64_t position_offset = 0;    // OPT: learned positions (max_positions + 2 rows); 0 with max_positions: GPT-2's
  std::uint64_t embed_proj_dim = 0;     // OPT word_embed_proj_dim != hidden: project_in / project_out (0: none)
  bool embed_norm = false;              // BLOOM: word_embeddings_layernorm after the embeddings
  bool alibi = false;                   // BLOOM: ALiBi bias added to the scores (eager attention only)
  bool alibi_mask = false;              // Falcon with alibi: ALiBi folded into the causal mask, one batch x heads x
                                        // seq x seq tensor held through the forward (SDPA's attn_mask)
  bool post_norm = false;               // OPT do_layer_norm_before=false: the norms after each residual sum
  bool scaled_query = false;            // OPT: q_proj(x) * scaling, a tensor of its own
  bool fp32_attention = false;          // GPT-J's _attn: query and key upcast, fp32 scores and softmax
  bool rope_fp32 = false;               // Cohere: apply_rotary_pos_emb on q.float(), k.float(), cast back
  bool scaled_embeddings = false;       // Granite: embeddings * embedding_multiplier
  bool scaled_residual = false;         // Granite: residual + branch * residual_multiplier
  bool scaled_logits = false;           // Granite (/ logits_scaling), Cohere (* logit_scale): a logits-sized tensor
  bool fused_gate_up = false;           // GLM-4 (like Phi-3): one gate_up_proj Linear
  bool attention_sinks = false;         // GPT-OSS: a learned sink logit per head concatenated to the scores, softmax in
                                        // the scores' dtype (its own eager attention: no SDPA)
  bool expert_biases = false;           // GPT-OSS: the router's and the experts' gate_up / down biases
  bool expert_score_bias = false;       // ERNIE-4.5-MoE: moe_statics.e_score_correction_bias, a Parameter without grad
  std::vector<bool> layer_nope;         // SmolLM3: per layer, true where the layer uses no RoPE (no_rope_layers 0)
  bool sub_norms = false;               // BitNet: RMSNorms on the attention's output before o_proj (hidden) and on the
                                        // MLP's act(gate) * up before down_proj (intermediate)
  bool nope_temperature = false;        // Llama 4: the NoPE layers' query times fp32 per-position scales
                                        // (attn_temperature_tuning: an fp32 query-sized product, cast back)
  std::vector<Mixer> layer_mixer;       // hybrids: per layer, its token mixer (LFM2's layer_types "conv", Jamba's
                                        // attn_layer_period / offset); empty: attention in every layer
  std::vector<bool> layer_moe;          // per layer, whether its feed-forward is the experts (Jamba's expert_layer_period /
                                        // offset); empty: the layers after dense_layers
  std::uint64_t short_conv_kernel = 0;  // LFM2: conv_L_cache, the short convolution's width
  bool short_conv_bias = false;         // LFM2: conv_bias (the conv's, in_proj's and out_proj's)
  // RecurrentGemma's recurrent blocks use ssm.inner (lru_width) and ssm.conv_kernel (conv1d_width); its gates are
  // block-diagonal over num_attention_heads blocks.
  std::uint64_t attention_cache_window = 0;  // RecurrentGemma: the attention's own fixed cache of attention_window_size
                                        // positions (_setup_cache), the keys of every forward that uses the cache
  bool all_hidden_states = false;       // the causal LM forces output_hidden_states: every layer's input held to its end
  std::uint64_t attention_experts = 0;  // JetMoE's mixture of attention heads (JetMoeMoA): this many experts of query and
                                        // output projections, experts_per_token of them per token, one shared kv_proj
  bool expert_output_bias = false;      // JetMoE: JetMoeMoA's and JetMoeMoE's bias (hidden_size) on their merged output
  double clip_qkv = 0.0;                // DBRX: the fused Wqkv's output clamped to [-clip_qkv, clip_qkv] (0: none)
  Quantization quant;                   // quantization_config of the checkpoint
  std::vector<HeaderTensor> header_tensors;  // FromHeaders: the checkpoint's tensors
  bool stand_in = false;                // an unknown model_type read as a generic encoder, encoder-decoder or
                                        // vision model (family Bert, Bart or Vit): the generic margin (+-30 %)
  std::vector<std::string> warnings;    // e.g. "unknown model_type 'foo': generic decoder"
  std::shared_ptr<const ModelConfig> vision_tower;  // a wrapper's vision_config (SigLIP, CLIP): what --task image-cls runs
};

// Parses config.json text. `source` names the file in error messages. Every size must be a
// positive integer below 2^40; heads must divide the hidden size unless head_dim is explicit.
Result<ModelConfig> parse_config_json(std::string_view text, const std::string& source);

// The family name the estimator uses for `family` ("llama", ..., "generic decoder").
std::string_view family_name(Family family);
// Takes the checkpoint's tensors (m.header_tensors, already filled) into account: an unknown
// model_type becomes Family::FromHeaders (weights sized tensor by tensor, its warning says so).
void attach_header_tensors(ModelConfig& m);
// How well the estimator knows the family: its measured error (docs/estimator.md), as a share of
// the estimate in per cent, that --max-batch / --max-seq add to the safety margin. Generic 30.
std::uint64_t family_uncertainty_percent(const ModelConfig& m);

}  // namespace vramdoc::estimator
