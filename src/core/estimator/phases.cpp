// Phases of a step and what is alive in each; see docs/estimator.md for every term's source.
#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/forward_ops.hpp"
#include "core/estimator/parallel.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 mul(u64 a, u64 b, u64 c) { return saturating_mul(saturating_mul(a, b), c); }
u64 add(u64 a, u64 b) { return saturating_add(a, b); }

struct OptimizerBytes {
  u64 state, temporaries;
};

OptimizerBytes optimizer_bytes(Optimizer opt, u64 trainable, u64 state_width, u64 factored, u64 biggest) {
  switch (opt) {
    case Optimizer::AdamW:
    case Optimizer::Adam:  // exp_avg, exp_avg_sq; the foreach step's sqrt(exp_avg_sq) temporaries
      return {mul(2 * state_width, trainable), mul(state_width, trainable)};
    case Optimizer::Sgd: return {0, 0};
    case Optimizer::SgdMomentum: return {mul(state_width, trainable), 0};
    // bitsandbytes Optimizer2State: two uint8 states plus an fp32 absmax per 256-element block each
    case Optimizer::AdamW8bit: return {add(mul(2, trainable), mul(8, trainable / 256 + 1)), 0};
    case Optimizer::Adafactor: return {mul(4, factored), mul(8, biggest)};
  }
  return {0, 0};
}

Phase make_phase(std::string name, std::vector<Term> terms) {
  Phase p{std::move(name), {}, 0};
  for (auto& t : terms) {
    if (t.bytes == 0) continue;
    p.allocated_bytes = add(p.allocated_bytes, t.bytes);
    p.terms.push_back(std::move(t));
  }
  return p;
}

ReplicaStates replica_states(const Run& r) {
  const Options& o = r.o;
  const Sizes& s = r.s;
  const bool lora = adapters(o), mp = fsdp_mixed_precision(o);
  ReplicaStates rs;
  rs.weight_width = mp ? 4 : r.w.weight;
  rs.compute_width = mp ? 2 : rs.weight_width;
  rs.reduce_width = mp ? 4 : rs.weight_width;
  // (less the parameters the forward never reads: no gradient, no optimizer state)
  rs.trainable_params = lora ? s.adapter_params : s.local_params - std::min(s.gradless_params, s.local_params);
  const u64 state_width = lora ? 4 : rs.weight_width;  // PEFT keeps adapters (and their state) in fp32
  // A quantised base keeps its stored bytes (split like the rest under --tp).
  const u64 base = s.quant_params > 0 ? s.weight_bytes / o.tensor_parallel : mul(s.local_params, rs.weight_width);
  rs.weights = add(base, mul(s.adapter_params, 4));
  rs.grads = mul(rs.trainable_params, state_width);
  auto [state, temps] = optimizer_bytes(o.optimizer, rs.trainable_params, state_width, s.factored_state, s.biggest_tensor);
  if (o.mode == Mode::Qlora && o.optimizer == Optimizer::AdamW8bit) state = 0;  // paged: outside the allocator
  rs.state = state, rs.temps = temps;
  rs.layers = std::max<u64>(r.m.num_layers, 1);
  rs.layer_params = s.layer_params, rs.root_params = s.root_params, rs.head_params = s.lm_head_params;
  rs.persistent_params = s.persistent_params;
  return rs;
}

Phase with_states(std::string name, const ReplicaStates& rs, const Options& o, StepPoint point, u64 grads_so_far,
                  const std::vector<Term>& extra) {
  std::vector<Term> terms = rank_state_terms(rs, o, point, grads_so_far);
  terms.insert(terms.end(), extra.begin(), extra.end());
  return make_phase(std::move(name), std::move(terms));
}

// The terms of a stage's peak in an op-by-op sequence, by what each live tensor is (the cuBLAS
// workspaces are the estimate's own term).
std::vector<Term> stage_terms(const StagePeak& p, const char* key, const char* label) {
  return {{"weights_bytes", "weights", p.of(Use::Weight)},
          {"gradients_bytes", "gradients", p.of(Use::Gradient)},
          {"optimizer_state_bytes", "optimizer state", p.of(Use::State)},
          {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", p.of(Use::Cast)},
          {"kv_cache_bytes", "KV cache", p.of(Use::Cache)},
          {"logits_loss_bytes", "logits, loss and its gradients", p.of(Use::Logits)},
          {key, label, p.of(Use::Activation)},
          {"dequant_buffer_bytes", "dequantised weight", p.of(Use::Dequant)}};
}

// Models with an encoder on one GPU: their layers differ from one another (an encoder's and a
// decoder's, Swin's stages), so the phases are the live bytes at the peak of each stage of the
// training step's op-by-op sequence (step_sequence.cpp), as inference's are.
std::vector<Phase> sequence_training_phases(const Run& r, bool checkpointing) {
  Options o = r.o;
  o.grad_checkpointing = checkpointing;
  const Run run{r.m, o, r.w, r.s, r.targets};
  Sequence seq;
  training_events(seq, run);
  return {make_phase("backward start (loss gradient)", stage_terms(seq.peak(Stage::Loss), "activations_bytes",
                                                                   "activations kept for backward")),
          make_phase(checkpointing ? "backward (recomputing a checkpointed layer)" : "backward (the layers' gradients)",
                     stage_terms(seq.peak(Stage::Backward), "activations_bytes", "activations and their gradients")),
          make_phase("forward (activations kept for backward)",
                     stage_terms(seq.peak(Stage::Forward), "activations_bytes", "activations kept for backward")),
          make_phase("optimizer step", stage_terms(seq.peak(Stage::Optimizer), "optimizer_temporaries_bytes",
                                                   "optimizer step temporaries"))};
}

}  // namespace

std::vector<Phase> training_phases(const Run& r, bool checkpointing) {
  const ModelConfig& m = r.m;
  // Mamba2 too: its peak is a layer's transient (the SSD's broadcast products and their backward, forward_ssm2.cpp),
  // which the terms below (saved tensors, logits) do not hold
  const bool by_sequence = m.kind != ModelKind::Decoder || m.ssm.heads != 0;
  if (by_sequence && r.o.gpus == 1 && r.o.tensor_parallel == 1 && r.o.zero_stage == 0) {
    return sequence_training_phases(r, checkpointing);
  }
  const Options& o = r.o;
  const Widths& w = r.w;
  const Sizes& s = r.s;
  const bool lora = adapters(o);
  const u64 tokens = mul(o.batch, o.seq), logit_tokens = o.logits_last_only ? o.batch : tokens;
  const ReplicaStates rs = replica_states(r);
  const SavedBytes saved = saved_bytes(r);
  const u64 checkpoint_bytes = mul(m.hidden_size, w.wide, tokens);  // each layer's input
  const u64 head_bytes = saved.head;
  const u64 cast_all = w.amp ? mul(2, s.local_matmul) : 0;
  const u64 cast_lm_head = w.amp ? mul(2, s.lm_head_params) : 0;
  // The quantised base dequantises one Linear's weight in the compute dtype per forward/backward.
  const u64 dequant = mul(s.dequant_elements, w.act);
  // Cross-entropy in fp32: log_softmax output (saved), nll_loss's gradient, log_softmax's gradient;
  // Gemma 2's logit soft-capping also keeps tanh's output in the activation dtype. lm_head stays
  // whole under --tp: every rank computes all logits.
  const LossShape loss = loss_shape(r);  // causal LM: fp32; BERT-style, T5, BART, Whisper: the logits' dtype
  // (under autocast CrossEntropyLoss on 16-bit logits: the 16-bit log-probabilities, nll_loss's fp32 copy and its
  // fp32 gradient, LossShape::autocast_nll)
  const u64 logits = mul(loss.fp32 ? 12 + (m.final_logit_softcap > 0 ? w.act : 0) : loss.autocast_nll ? w.act + 8 : 3 * w.act,
                         loss.elements);
  (void)logit_tokens;
  const u64 kept = checkpointing ? add(mul(checkpoint_bytes, m.num_layers), head_bytes) : add(saved.all_layers, head_bytes);
  const u64 head_grads = lora ? 0 : mul(s.lm_head_params, rs.weight_width);
  const Term cast{"autocast_weight_copies_bytes", "autocast 16-bit weight copies", checkpointing ? cast_lm_head : cast_all};
  std::vector<Phase> phases;
  const Term mask{"attention_mask_bytes", "attention mask (saved by every layer's SDPA)", saved.mask};
  phases.push_back(with_states("backward start (loss gradient)", rs, o, StepPoint::BackwardStart, 0,
                               {cast, {"activations_bytes", "activations kept for backward", kept},
                                {"logits_loss_bytes", "fp32 logits, loss and its gradients", logits}, mask}));
  if (checkpointing) {
    const u64 layer_cast = w.amp ? (cast_all - cast_lm_head) / std::max<u64>(m.num_layers, 1) : 0;
    const u64 embed_grads = mul(s.embed_params, rs.weight_width);
    // The larger of: the last layer (lm_head's gradient, every checkpoint) and the first (all
    // gradients but the embeddings', one checkpoint).
    const std::pair<u64, u64> ends[] = {{head_grads, m.num_layers}, {rs.grads > embed_grads ? rs.grads - embed_grads : rs.grads, 1}};
    Phase best;
    for (const auto& [grads, checkpoints] : ends) {
      Phase p = with_states("backward (recomputing a checkpointed layer)", rs, o, StepPoint::BackwardLayer, grads,
                            {{"autocast_weight_copies_bytes", "autocast 16-bit weight copies", add(cast_lm_head, layer_cast)},
                             {"checkpoints_bytes", "layer checkpoints", mul(checkpoint_bytes, checkpoints)},
                             {"activations_bytes", "one recomputed layer", saved.largest_layer}, mask,
                             {"dequant_buffer_bytes", "dequantised weight (quantised base)", dequant}});
      if (p.allocated_bytes > best.allocated_bytes) best = std::move(p);
    }
    phases.push_back(std::move(best));
  } else if (data_parallel_degree(o) > 1) {
    phases.push_back(with_states("backward (the last layer: gathered weights, gradients)", rs, o, StepPoint::BackwardLayer,
                                 head_grads, {cast, {"activations_bytes", "activations kept for backward", kept}, mask}));
  }
  // A tied embedding trained on one GPU, at its backward: every gradient made, the embeddings' own beside lm_head's
  // share and, without autocast, their out-of-place sum (backward.cpp embeddings_backward).
  if (o.mode == Mode::Train && m.tie_word_embeddings && m.kind == ModelKind::Decoder && data_parallel_degree(o) == 1 &&
      o.tensor_parallel == 1) {
    const u64 tied = mul(m.vocab_size, m.embed_proj_dim > 0 ? m.embed_proj_dim : m.hidden_size, rs.weight_width);
    phases.push_back(with_states("backward (the tied embeddings' gradient)", rs, o, StepPoint::BackwardLayer, rs.grads,
                                 {{"embedding_gradient_bytes",
                                   w.amp ? "the embeddings' own gradient (added in place to lm_head's)"
                                         : "the embeddings' own gradient and its sum with lm_head's",
                                   w.amp ? tied : mul(2, tied)}}));
  }
  phases.push_back(with_states("optimizer step", rs, o, StepPoint::OptimizerStep, 0, {}));
  return phases;
}

std::vector<Phase> inference_phases(const Run& r) {
  const Options& o = r.o;
  const Sizes& s = r.s;
  const u64 tp = o.tensor_parallel;
  const u64 weights = s.quant_params > 0 ? s.weight_bytes / tp : mul(s.local_params, r.w.weight);
  // Everything else from the op-by-op sequence (infer_sequence.cpp): the live bytes at each
  // stage's peak, by what they are.
  Sequence seq;
  inference_events(seq, r);
  const auto terms = [&](Stage stage, const char* key, const char* label) {
    const StagePeak& p = seq.peak(stage);
    return std::vector<Term>{{"weights_bytes", "weights", weights},
                             {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", p.of(Use::Cast)},
                             {"kv_cache_bytes", "KV cache", p.of(Use::Cache)},
                             {key, label, p.of(Use::Activation)},
                             {"dequant_buffer_bytes", "dequantised weight", p.of(Use::Dequant)}};
  };
  std::vector<Phase> phases = {
      make_phase("forward: logits", terms(Stage::Head, "logits_loss_bytes", "logits (and lm_head's input)")),
      make_phase("forward: a decoder layer", terms(Stage::Layers, "layer_transient_bytes", "layer temporaries"))};
  if (o.new_tokens > 0) {
    phases.push_back(make_phase("decoding (KV cache growing)", terms(Stage::Decoding, "decoding_transient_bytes",
                                                                     "decoding temporaries (logits, cache copies)")));
  }
  return phases;
}

}  // namespace vramdoc::estimator::detail
