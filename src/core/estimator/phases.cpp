// Phases of a step and what is alive in each; see docs/estimator.md for every term's source.
#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
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

struct LayerBytes {
  u64 all = 0;      // every layer's saved tensors
  u64 largest = 0;  // one layer (the largest kind): what a checkpointed layer recomputes
};

LayerBytes layer_bytes(const Run& r, u64 tokens) {
  LayerBytes b;
  for (const auto& [kind, count] : layer_kinds(r.m)) {
    const auto layer = describe_layer(r.m, attention_path(r.m, r.o, kind), r.o.seq, kind);
    const u64 one = mul(total(tensor_bytes_per_token(layer, r.w, r.o, r.targets, r.o.tensor_parallel)), tokens);
    b.all = add(b.all, mul(one, count));
    b.largest = std::max(b.largest, one);
  }
  return b;
}

// Elements per token the MLP's forward holds at once under no_grad: a gated MLP's act(gate), up and
// product (a fused gate_up buffer stays alive beside them: 4 I); fc1's output and gelu's (2 I); the
// Python gelu_new's temporaries (4 I); grouped experts' locals: the gathered and permuted inputs,
// gate_up, the product and the outputs of every routed copy, plus the shared expert.
u64 mlp_temporaries_per_token(const ModelConfig& m) {
  const u64 I = m.intermediate_size;
  u64 dense = m.mlp == MlpKind::Gelu ? 2 * I : m.mlp == MlpKind::NewGelu || m.family == Family::Phi3 ? 4 * I : 3 * I;
  if (m.num_experts == 0) return dense;
  const u64 routed = mul(m.experts_per_token, 3 * m.hidden_size + 3 * m.moe_intermediate_size);
  const u64 moe = add(routed, 3 * m.shared_expert_intermediate);
  return m.dense_layers > 0 ? std::max(dense, moe) : moe;
}

ReplicaStates replica_states(const Run& r) {
  const Options& o = r.o;
  const Sizes& s = r.s;
  const bool lora = adapters(o), mp = fsdp_mixed_precision(o);
  ReplicaStates rs;
  rs.weight_width = mp ? 4 : r.w.weight;
  rs.compute_width = mp ? 2 : rs.weight_width;
  rs.reduce_width = mp ? 4 : rs.weight_width;
  rs.trainable_params = lora ? s.adapter_params : s.local_params;
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

}  // namespace

std::vector<Phase> training_phases(const Run& r, bool checkpointing) {
  const ModelConfig& m = r.m;
  const Options& o = r.o;
  const Widths& w = r.w;
  const Sizes& s = r.s;
  const bool lora = adapters(o);
  const u64 tokens = mul(o.batch, o.seq), logit_tokens = o.logits_last_only ? o.batch : tokens;
  const ReplicaStates rs = replica_states(r);
  const LayerBytes layers = layer_bytes(r, tokens);
  const u64 checkpoint_bytes = mul(m.hidden_size, w.wide, tokens);  // each layer's input
  const u64 head_bytes = mul(total(tensor_bytes_per_token(describe_head(m), w, o, r.targets, 1)), tokens);
  const u64 cast_all = w.amp ? mul(2, s.local_matmul) : 0;
  const u64 cast_lm_head = w.amp ? mul(2, s.lm_head_params) : 0;
  // The quantised base dequantises one Linear's weight in the compute dtype per forward/backward.
  const u64 dequant = mul(s.dequant_elements, w.act);
  // Cross-entropy in fp32: log_softmax output (saved), nll_loss's gradient, log_softmax's gradient;
  // Gemma 2's logit soft-capping also keeps tanh's output in the activation dtype. lm_head stays
  // whole under --tp: every rank computes all logits.
  const u64 logits = mul(12 + (m.final_logit_softcap > 0 ? w.act : 0), logit_tokens, m.vocab_size);
  const u64 kept = checkpointing ? add(mul(checkpoint_bytes, m.num_layers), head_bytes) : add(layers.all, head_bytes);
  const u64 head_grads = lora ? 0 : mul(s.lm_head_params, rs.weight_width);
  const Term cast{"autocast_weight_copies_bytes", "autocast 16-bit weight copies", checkpointing ? cast_lm_head : cast_all};
  std::vector<Phase> phases;
  phases.push_back(with_states("backward start (loss gradient)", rs, o, StepPoint::BackwardStart, 0,
                               {cast, {"activations_bytes", "activations kept for backward", kept},
                                {"logits_loss_bytes", "fp32 logits, loss and its gradients", logits}}));
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
                             {"activations_bytes", "one recomputed layer", layers.largest},
                             {"dequant_buffer_bytes", "dequantised weight (quantised base)", dequant}});
      if (p.allocated_bytes > best.allocated_bytes) best = std::move(p);
    }
    phases.push_back(std::move(best));
  } else if (data_parallel_degree(o) > 1) {
    phases.push_back(with_states("backward (the last layer: gathered weights, gradients)", rs, o, StepPoint::BackwardLayer,
                                 head_grads, {cast, {"activations_bytes", "activations kept for backward", kept}}));
  }
  phases.push_back(with_states("optimizer step", rs, o, StepPoint::OptimizerStep, 0, {}));
  return phases;
}

std::vector<Phase> inference_phases(const Run& r) {
  const ModelConfig& m = r.m;
  const Options& o = r.o;
  const Widths& w = r.w;
  const Sizes& s = r.s;
  const bool generate = o.new_tokens > 0;
  const u64 tokens = mul(o.batch, o.seq), logit_tokens = o.logits_last_only || generate ? o.batch : tokens;
  const u64 tp = o.tensor_parallel;
  const u64 weights = s.quant_params > 0 ? s.weight_bytes / tp : mul(s.local_params, w.weight);
  const u64 cast = w.amp ? mul(2, s.local_matmul) : 0;
  const u64 per_layer_kv = kv_bytes_per_token_layer(r);
  // Sliding-window layers too: the prefill concatenates the whole prompt and keeps the window as
  // a view of it, so the full states stay allocated until the next decoding step (cache_utils.py).
  const u64 kv = mul(mul(m.num_layers, o.batch, o.seq), per_layer_kv);
  const u64 kv_final = mul(mul(m.num_layers, o.batch, o.seq + o.new_tokens), per_layer_kv);
  // Soft-capped logits (Gemma 2): tanh's output and the rescaled logits exist together.
  const u64 logits_tensor = mul(logit_tokens, m.vocab_size, mul(w.act, m.final_logit_softcap > 0 ? 2 : 1));
  const u64 head_input = mul(tokens, m.hidden_size, w.act);
  const u64 logits = add(logits_tensor, add(head_input, generate ? mul(4, mul(o.batch, m.vocab_size)) : 0));
  const u64 mlp = mul(mul(tokens, w.act), mlp_temporaries_per_token(m) / tp);
  u64 attention = mul(tokens, mul(m.num_heads + 2 * m.num_kv_heads, m.head_dim) / tp, w.act);
  if (attention_path(m, o) != AttentionPath::Fused) {
    // scores in the activation dtype, and two fp32 copies: softmax(dtype=float32)'s upcast input and
    // its output (eager), the math kernel's fp32 scores and probabilities
    const u64 per_score = w.act + 8;
    attention = mul(mul(o.batch, m.num_heads / tp), mul(o.seq, o.seq), per_score);
  }
  if (m.sliding_window > 0 && o.seq > m.sliding_window) {  // explicit mask, bool + additive copy
    attention = add(attention, mul(o.batch, mul(o.seq, o.seq), 1 + w.act));
  }
  const u64 residual = mul(2 * w.wide, tokens, m.hidden_size);
  const u64 dequant = mul(s.dequant_elements, w.act);
  std::vector<Phase> phases = {
      make_phase("forward: logits", {{"weights_bytes", "weights", weights},
                                     {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", cast},
                                     {"kv_cache_bytes", "KV cache", kv},
                                     {"logits_loss_bytes", "logits (and lm_head's input)", logits}}),
      make_phase("forward: a decoder layer", {{"weights_bytes", "weights", weights},
                                              {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", cast},
                                              {"kv_cache_bytes", "KV cache", kv},
                                              {"layer_transient_bytes", "layer temporaries", add(residual, std::max(mlp, attention))},
                                              {"dequant_buffer_bytes", "dequantised weight", dequant}})};
  if (generate) {  // each decoding step concatenates one layer's keys and values into new tensors
    const u64 one_layer = mul(mul(o.batch, o.seq + o.new_tokens), per_layer_kv);
    phases.push_back(make_phase("decoding (KV cache growing)", {{"weights_bytes", "weights", weights},
                                                              {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", cast},
                                                              {"kv_cache_bytes", "KV cache", add(kv_final, one_layer)}}));
  }
  return phases;
}

}  // namespace vramdoc::estimator::detail
