// Phases of a step and what is alive in each; see docs/estimator.md for every term's source.
#include "core/estimator/estimate.hpp"

#include <algorithm>
#include <limits>

#include "core/estimator/architecture.hpp"
#include "core/estimator/calibration.hpp"
#include "core/estimator/nccl.hpp"
#include "core/estimator/parallel.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 mul(u64 a, u64 b, u64 c) { return saturating_mul(saturating_mul(a, b), c); }
u64 add(u64 a, u64 b) { return saturating_add(a, b); }
constexpr u64 kSaturated = std::numeric_limits<u64>::max();

struct Widths {
  u64 act, wide, weight;
  bool amp;
};

Widths widths_of(Precision p) {
  switch (p) {
    case Precision::Fp32: return {4, 4, 4, false};
    case Precision::AmpBf16:
    case Precision::AmpFp16: return {2, 4, 4, true};
    case Precision::Bf16:
    case Precision::Fp16: return {2, 2, 2, false};
  }
  return {4, 4, 4, false};
}

u64 width(Dtype d, const Widths& w) {
  switch (d) {
    case Dtype::Act: return w.act;
    case Dtype::Wide: return w.wide;
    case Dtype::Fp32: return 4;
    case Dtype::Mask: return 1;
    case Dtype::Copy16: return w.act == 4 ? 0 : 2;
    case Dtype::AutocastCopy16: return w.amp ? 2 : 0;
  }
  return 4;
}

// Bytes per token autograd keeps for `a` in this mode (tensor parallelism splits the per-head
// and per-channel tensors; norms and the Linear inputs they feed stay whole on every TP rank).
u64 saved_per_token(const LayerActivations& a, const Widths& w, const Options& o, const std::vector<std::string>& targets) {
  u64 bytes = 0;
  for (const auto& s : a.saved) {
    if (o.mode == Mode::Lora && s.weight_grad_only) continue;
    bytes = add(bytes, mul(s.elements_per_token, width(s.dtype, w)) / (s.tp_split ? o.tensor_parallel : 1));
  }
  for (const auto& li : a.linear_inputs) {
    u64 per_element = 0;
    if (o.mode == Mode::Lora) {
      u64 adapters = 0;
      for (const auto& c : li.consumers) adapters += is_lora_target(c, targets) ? 1 : 0;
      // PEFT casts the input to the adapters' fp32 (one copy per adapter; none in an fp32 model);
      // under autocast lora_A's matmul then saves a 16-bit copy per adapter.
      if (w.amp) {
        per_element = 2 * adapters;
      } else if (w.act == 4) {
        per_element = adapters > 0 && !li.already_saved ? 4 : 0;
      } else {
        per_element = 4 * adapters;
      }
    } else if (w.amp) {
      per_element = li.wide_source ? 2 * li.consumers.size() : (li.already_saved ? 0 : 2);
    } else {
      per_element = li.already_saved ? 0 : w.act;
    }
    bytes = add(bytes, mul(li.elements_per_token, per_element) / (li.tp_split ? o.tensor_parallel : 1));
  }
  return bytes;
}

struct Sizes {
  u64 params = 0, matmul_params = 0, adapter_params = 0, embed_params = 0, lm_head_params = 0, biggest_tensor = 0;
  u64 factored_state = 0;  // Adafactor: rows + cols per matrix, the whole vector otherwise
  // What one tensor-parallel rank holds (attention and MLP Linears divided by --tp; equal to the
  // above without it), split into the decoder layers and the rest (the FSDP root unit).
  u64 local_params = 0, local_matmul = 0, layer_params = 0, root_params = 0, persistent_params = 0;
};

// Tensor parallelism (ColwiseParallel / RowwiseParallel on attention and MLP) splits these; the
// embeddings, lm_head, norms and the MoE router stay whole on every rank.
bool tp_split(const WeightTensor& t) { return (t.matmul && t.name != "lm_head" && t.name != "gate") || t.name == "q/k/v biases"; }

void count_local(const ModelConfig& m, const Options& o, const WeightTensor& t, Sizes& s) {
  const u64 n = mul(t.rows, t.cols, t.count), local = tp_split(t) ? n / o.tensor_parallel : n;
  if (t.matmul) s.local_matmul = add(s.local_matmul, local);
  if (t.tied) return;
  s.local_params = add(s.local_params, local);
  if (t.count >= m.num_layers && t.count % std::max<u64>(m.num_layers, 1) == 0) {
    s.layer_params = add(s.layer_params, local / std::max<u64>(m.num_layers, 1));
  } else {
    s.root_params = add(s.root_params, local);
  }
  if (mul(t.rows, t.cols) < o.parallel.zero_persistence_threshold) s.persistent_params = add(s.persistent_params, local);
}

Sizes count_params(const ModelConfig& m, const Options& o, const std::vector<std::string>& targets) {
  Sizes s;
  for (const auto& t : describe_weights(m)) {
    const u64 n = mul(t.rows, t.cols, t.count);
    count_local(m, o, t, s);
    if (t.matmul) s.matmul_params = add(s.matmul_params, n);
    if (t.name == "lm_head") s.lm_head_params = mul(t.rows, t.cols);
    if (t.tied) continue;
    s.params = add(s.params, n);
    s.biggest_tensor = std::max(s.biggest_tensor, mul(t.rows, t.cols) / (tp_split(t) ? o.tensor_parallel : 1));
    if (t.name == "wte" || t.name == "wpe" || t.name == "embed_tokens") s.embed_params = add(s.embed_params, n);
    s.factored_state = add(s.factored_state, t.rows > 1 ? mul(t.rows + t.cols, t.count) : n);
    if (o.mode == Mode::Lora && t.matmul && is_lora_target(t.name, targets)) {
      s.adapter_params = add(s.adapter_params, mul(o.lora_rank, t.rows + t.cols, t.count));
    }
  }
  return s;
}

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
    case Optimizer::AdamW8bit: return {mul(2, trainable), 0};  // two int8 states, fused kernel
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

AttentionPath attention_path(const ModelConfig& m, const Options& o) {
  if (o.attention == Attention::Eager) return AttentionPath::Eager;
  // SDPA in fp32 with grouped KV heads runs the math kernel (the fused ones take no GQA in fp32).
  if (o.precision == Precision::Fp32 && m.num_kv_heads < m.num_heads) return AttentionPath::Math;
  return AttentionPath::Fused;
}

// One replica's model states after tensor parallelism. Under FSDP mixed precision `w` holds the
// 16-bit compute widths while the sharded weights, gradients and state stay fp32.
ReplicaStates replica_states(const ModelConfig& m, const Options& o, const Widths& w, const Sizes& s) {
  const bool lora = o.mode == Mode::Lora, mp = fsdp_mixed_precision(o);
  ReplicaStates r;
  r.weight_width = mp ? 4 : w.weight;
  r.compute_width = mp ? 2 : r.weight_width;
  r.reduce_width = mp ? 4 : r.weight_width;
  r.trainable_params = lora ? s.adapter_params : s.local_params;
  const u64 state_width = lora ? 4 : r.weight_width;  // PEFT keeps adapters (and their state) in fp32
  r.weights = add(mul(s.local_params, r.weight_width), mul(s.adapter_params, 4));
  r.grads = mul(r.trainable_params, state_width);
  const auto [state, temps] = optimizer_bytes(o.optimizer, r.trainable_params, state_width, s.factored_state, s.biggest_tensor);
  r.state = state, r.temps = temps;
  r.layers = std::max<u64>(m.num_layers, 1);
  r.layer_params = s.layer_params, r.root_params = s.root_params, r.head_params = s.lm_head_params;
  r.persistent_params = s.persistent_params;
  return r;
}

Phase with_states(std::string name, const ReplicaStates& r, const Options& o, StepPoint point, u64 grads_so_far,
                  const std::vector<Term>& extra) {
  std::vector<Term> terms = rank_state_terms(r, o, point, grads_so_far);
  terms.insert(terms.end(), extra.begin(), extra.end());
  return make_phase(std::move(name), std::move(terms));
}

std::vector<Phase> training_phases(const ModelConfig& m, const Options& o, const Widths& w, const Sizes& s,
                                   const std::vector<std::string>& targets, bool checkpointing) {
  const bool lora = o.mode == Mode::Lora;
  const u64 tokens = mul(o.batch, o.seq), logit_tokens = o.logits_last_only ? o.batch : tokens;
  const ReplicaStates r = replica_states(m, o, w, s);
  const LayerActivations layer = describe_layer(m, attention_path(m, o), o.seq);
  const u64 layer_bytes = mul(saved_per_token(layer, w, o, targets), tokens);
  const u64 checkpoint_bytes = mul(m.hidden_size, w.wide, tokens);  // each layer's input
  const u64 head_bytes = mul(saved_per_token(describe_head(m), w, o, targets), tokens);
  const u64 cast_all = w.amp ? mul(2, s.local_matmul) : 0;
  const u64 cast_lm_head = w.amp ? mul(2, s.lm_head_params) : 0;
  // Cross-entropy in fp32: log_softmax output (saved), nll_loss's gradient, log_softmax's gradient.
  const u64 logits = mul(12, logit_tokens, m.vocab_size);
  const u64 kept = checkpointing ? add(mul(checkpoint_bytes, m.num_layers), head_bytes)
                                 : add(mul(layer_bytes, m.num_layers), head_bytes);
  const u64 head_grads = lora ? 0 : mul(s.lm_head_params, r.weight_width);
  const Term cast{"autocast_weight_copies_bytes", "autocast 16-bit weight copies", checkpointing ? cast_lm_head : cast_all};
  std::vector<Phase> phases;
  phases.push_back(with_states("backward start (loss gradient)", r, o, StepPoint::BackwardStart, 0,
                               {cast, {"activations_bytes", "activations kept for backward", kept},
                                {"logits_loss_bytes", "fp32 logits, loss and its gradients", logits}}));
  if (checkpointing) {
    const u64 layer_cast = w.amp ? (cast_all - cast_lm_head) / std::max<u64>(m.num_layers, 1) : 0;
    const u64 embed_grads = mul(s.embed_params, r.weight_width);
    // The larger of: the last layer (lm_head's gradient, every checkpoint) and the first (all
    // gradients but the embeddings', one checkpoint).
    const std::pair<u64, u64> ends[] = {{head_grads, m.num_layers}, {r.grads > embed_grads ? r.grads - embed_grads : r.grads, 1}};
    Phase best;
    for (const auto& [grads, checkpoints] : ends) {
      Phase p = with_states("backward (recomputing a checkpointed layer)", r, o, StepPoint::BackwardLayer, grads,
                            {{"autocast_weight_copies_bytes", "autocast 16-bit weight copies", add(cast_lm_head, layer_cast)},
                             {"checkpoints_bytes", "layer checkpoints", mul(checkpoint_bytes, checkpoints)},
                             {"activations_bytes", "one recomputed layer", layer_bytes}});
      if (p.allocated_bytes > best.allocated_bytes) best = std::move(p);
    }
    phases.push_back(std::move(best));
  } else if (data_parallel_degree(o) > 1) {
    phases.push_back(with_states("backward (the last layer: gathered weights, gradients)", r, o, StepPoint::BackwardLayer,
                                 head_grads, {cast, {"activations_bytes", "activations kept for backward", kept}}));
  }
  phases.push_back(with_states("optimizer step", r, o, StepPoint::OptimizerStep, 0, {}));
  return phases;
}

// Bytes of the free segments `freed` (an earlier phase's temporaries, one segment each) still
// unused once `requests` (a phase's new tensors, largest first) took the best-fitting free segment.
u64 unreused_segments(std::vector<u64> freed, std::vector<u64> requests) {
  u64 unused = 0;
  for (u64 f : freed) unused = add(unused, segment_bytes(f));
  std::sort(requests.rbegin(), requests.rend());
  for (u64 r : requests) {
    if (r <= 1 * MiB) continue;  // the small pool: never carved from a large segment
    auto best = freed.end();
    for (auto it = freed.begin(); it != freed.end(); ++it) {
      if (segment_bytes(*it) >= r && (best == freed.end() || *it < *best)) best = it;
    }
    if (best == freed.end()) continue;  // a new segment: the request adds to reserved by itself
    unused -= std::min(unused, r);
    freed.erase(best);
  }
  return unused;
}

std::vector<Phase> inference_phases(const ModelConfig& m, const Options& o, const Widths& w, const Sizes& s) {
  const u64 tokens = mul(o.batch, o.seq), logit_tokens = o.logits_last_only ? o.batch : tokens;
  const u64 tp = o.tensor_parallel;
  const u64 weights = mul(s.local_params, w.weight);
  const u64 cast = w.amp ? mul(2, s.local_matmul) : 0;
  // DynamicCache keeps keys after RoPE (fp32 under autocast: RoPE's cos/sin are fp32) and values.
  const u64 kv_width = o.kv_bytes_per_element ? 2 * *o.kv_bytes_per_element : (w.amp ? 4 : w.act) + w.act;
  // Sliding-window layers too: the prefill concatenates the whole prompt and keeps the window as
  // a view of it, so the full states stay allocated until the next decoding step (cache_utils.py).
  const u64 kv = mul(mul(m.num_layers, o.batch, o.seq), mul(m.num_kv_heads, m.head_dim) / tp, kv_width);
  const u64 logits_tensor = mul(logit_tokens, m.vocab_size, w.act);  // lm_head stays whole under --tp
  const u64 head_input = mul(tokens, m.hidden_size, w.act);
  const u64 logits = add(logits_tensor, head_input);
  u64 mlp = mul(3 * w.act, tokens, m.intermediate_size / tp);
  if (m.num_experts > 0) mlp = mul(mlp / m.num_experts, std::max<u64>(m.experts_per_token, 1));
  u64 attention = mul(tokens, mul(m.num_heads + 2 * m.num_kv_heads, m.head_dim) / tp, w.act);
  if (attention_path(m, o) != AttentionPath::Fused) attention = mul(mul(o.batch, m.num_heads / tp), mul(o.seq, o.seq), w.act + 4);
  if (m.sliding_window > 0 && o.seq > m.sliding_window) {  // explicit mask, bool + additive copy
    attention = add(attention, mul(o.batch, mul(o.seq, o.seq), 1 + w.act));
  }
  const u64 residual = mul(2 * w.wide, tokens, m.hidden_size);
  // The decoder layers' temporaries (two residual-stream tensors, then the MLP's three or the
  // attention's) stay cached as segments; the logits reuse them only where they fit.
  std::vector<u64> layer_blocks = {residual / 2, residual / 2};
  if (mlp >= attention) {
    layer_blocks.insert(layer_blocks.end(), 3, mlp / 3);
  } else {
    layer_blocks.push_back(attention);
  }
  Phase logits_phase = make_phase("forward: logits",
                                  {{"weights_bytes", "weights", weights},
                                   {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", cast},
                                   {"kv_cache_bytes", "KV cache", kv},
                                   {"logits_loss_bytes", "logits (and lm_head's input)", logits}});
  logits_phase.cached_bytes = unreused_segments(layer_blocks, {logits_tensor, head_input});
  return {std::move(logits_phase),
          make_phase("forward: a decoder layer", {{"weights_bytes", "weights", weights},
                                                  {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", cast},
                                                  {"kv_cache_bytes", "KV cache", kv},
                                                  {"layer_transient_bytes", "layer temporaries",
                                                   add(residual, std::max(mlp, attention))}})};
}

std::vector<Phase> phases_for(const ModelConfig& m, const Options& o, const Widths& w, const Sizes& s,
                              const std::vector<std::string>& targets, bool checkpointing) {
  if (o.mode == Mode::Infer) return inference_phases(m, o, w, s);
  return training_phases(m, o, w, s, targets, checkpointing);
}

std::size_t peak_of(const std::vector<Phase>& phases) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < phases.size(); ++i) {
    if (phases[i].allocated_bytes > phases[best].allocated_bytes) best = i;
  }
  return best;
}

std::optional<std::string> options_error(const ModelConfig& model, const Options& o) {
  if (o.batch == 0 || o.seq == 0) return "batch and sequence length must be positive";
  if (o.gpus == 0 || o.tensor_parallel == 0) return "--gpus and --tp must be positive";
  if (o.mode == Mode::Lora && o.lora_rank == 0) return "--lora-rank must be positive";
  return parallel_error(model, o);
}

// The activations' widths: FSDP's mixed precision computes in 16 bit without autocast.
Widths activation_widths(const Options& o) {
  if (!fsdp_mixed_precision(o)) return widths_of(o.precision);
  return widths_of(o.precision == Precision::AmpFp16 ? Precision::Fp16 : Precision::Bf16);
}

}  // namespace

Result<Estimate> estimate(const ModelConfig& model, const Options& o) {
  if (auto error = options_error(model, o)) return make_error(*error);
  Estimate e;
  e.warnings = model.warnings;
  const std::vector<std::string> targets = o.lora_targets.empty() ? default_lora_targets(model) : o.lora_targets;
  const Widths w = activation_widths(o);
  const Sizes s = count_params(model, o, targets);
  if (o.mode == Mode::Lora && s.adapter_params == 0) {
    return make_error("no Linear of this " + std::string(family_name(model.family)) + " model matches --lora-targets");
  }
  if (o.attention == Attention::Flash && (o.precision == Precision::Fp32)) {
    e.warnings.push_back("flash attention needs 16-bit inputs: fp32 runs SDPA's other kernels");
  }
  if (o.mode != Mode::Infer && attention_path(model, o) == AttentionPath::Math) {
    e.warnings.push_back("fp32 SDPA with grouped KV heads falls back to the math kernel, which keeps "
                         "seq x seq fp32 probabilities per layer: use amp-bf16 or bf16");
  }
  e.n_params = s.params;
  e.n_trainable = o.mode == Mode::Train ? s.params : o.mode == Mode::Lora ? s.adapter_params : 0;
  e.phases = phases_for(model, o, w, s, targets, o.grad_checkpointing);
  e.peak_phase = peak_of(e.phases);
  e.workspace_bytes = kCublasWorkspaceBytes;
  e.peak_allocated_bytes = add(e.phases[e.peak_phase].allocated_bytes, e.workspace_bytes);
  // Segments are never returned: reserved peaks where live bytes plus the cached segments do.
  for (const auto& p : e.phases) {
    const u64 reserved = reserved_for(add(p.allocated_bytes, e.workspace_bytes), p.cached_bytes);
    if (reserved > e.peak_reserved_bytes) e.peak_reserved_bytes = reserved, e.cached_bytes = p.cached_bytes;
  }
  e.context_bytes = kCudaContextBytes;
  e.nccl_bytes = nccl_device_bytes(nccl_communicators(o), o.parallel.nccl_buffsize);
  e.process_bytes = add(add(e.peak_reserved_bytes, e.context_bytes), e.nccl_bytes);
  if (e.process_bytes >= kSaturated / 2) {
    return make_error("the estimate exceeds 2^63 bytes: batch x sequence is absurdly large");
  }
  if (o.mode != Mode::Infer && !o.grad_checkpointing) {
    const auto with = phases_for(model, o, w, s, targets, true);
    const u64 peak_with = with[peak_of(with)].allocated_bytes;
    const u64 peak_without = e.phases[e.peak_phase].allocated_bytes;
    e.checkpointing_saves_bytes = peak_without > peak_with ? peak_without - peak_with : 0;
  }
  return e;
}

}  // namespace vramdoc::estimator
