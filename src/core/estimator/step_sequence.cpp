// The allocation sequence of a step, tensor by tensor, in the order PyTorch makes and frees them:
// weights; then three training steps (forward keeps each layer's saved tensors, backward frees
// them layer by layer while the gradients appear, the optimizer's state arrives in step one, its
// foreach temporaries and the gradients go at the end of each step), or the prefill and the
// decoding steps. Replaying it through CachingAllocator gives the reserved memory.
#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

constexpr u64 kCublasWorkspace = 32 * MiB;  // a cuBLAS workspace: training makes two, inference one (traces)

class Sequence {
 public:
  u64 alloc(u64 bytes) {
    if (bytes == 0) return 0;
    events_.push_back({true, bytes, next_});
    return next_++;
  }
  void free(u64 id) {
    if (id != 0) events_.push_back({false, 0, id});
  }
  void free(std::vector<u64>& ids) {
    for (u64 id : ids) free(id);
    ids.clear();
  }
  std::vector<AllocEvent> take() { return std::move(events_); }

 private:
  std::vector<AllocEvent> events_;
  u64 next_ = 1;
};

// Tensors of the model: every weight (stacked experts one tensor per layer), and which belong to a
// decoder layer (split evenly over the layers) or to the embeddings / head.
struct Tensors {
  std::vector<u64> layer, head, embed;  // bytes per tensor; `layer` holds one layer's share
  std::vector<u64> layer_casts;         // a layer's autocast 16-bit copies
  u64 lm_head_cast = 0;
};

Tensors weight_tensors(const Run& r, u64 elem_width) {
  Tensors t;
  const u64 L = std::max<u64>(r.m.num_layers, 1);
  const Quantization q = effective_quant(r.m, r.o);
  for (const auto& w : describe_weights(r.m)) {
    const u64 each = mul(w.rows, w.cols);
    const bool quantized = w.stored_bytes > 0 || (q.method != QuantMethod::None && w.quantizable);
    if (w.name == "lm_head" && r.w.amp) t.lm_head_cast = mul(each, 2);
    if (w.tied) continue;
    u64 bytes = quantized ? (w.stored_bytes > 0 ? w.stored_bytes : quantized_bytes(q, w.rows, w.cols)) : mul(each, elem_width);
    if (w.count >= L && w.count % L == 0) {  // per layer: count / L tensors (stacked experts: one)
      const u64 per_layer = w.count / L, tensors = w.name.rfind("experts.", 0) == 0 ? 1 : per_layer;
      for (u64 i = 0; i < tensors; ++i) t.layer.push_back(mul(bytes, per_layer / tensors));
      if (w.matmul && r.w.amp && !quantized) t.layer_casts.push_back(mul(mul(each, per_layer), 2));
    } else if (w.name == "lm_head" || w.name == "norm" || w.name == "lm_head.bias") {
      t.head.push_back(mul(bytes, w.count));
    } else {
      t.embed.push_back(mul(bytes, w.count));
    }
  }
  return t;
}

// What one training step allocates and frees, given the model's tensors.
struct TrainPlan {
  Tensors weights, grads;
  std::vector<std::vector<u64>> layer_saved;  // per layer, each saved tensor's bytes
  std::vector<u64> head_saved;
  u64 residual = 0, logits_act = 0, logits_fp32 = 0, softcap = 0;
  u64 tied_embedding = 0;     // full training with a tied lm_head: bytes of the shared weight's gradient
  u64 states_per_tensor = 0;  // optimizer states per trainable tensor (same bytes)
  bool foreach_temporaries = false, checkpointing = false, lora = false;
};

TrainPlan train_plan(const Run& r) {
  TrainPlan p;
  const u64 tokens = mul(r.o.batch, r.o.seq), tp = r.o.tensor_parallel;
  const u64 logit_tokens = r.o.logits_last_only ? r.o.batch : tokens, V = r.m.vocab_size / tp;
  p.lora = adapters(r.o);
  p.checkpointing = r.o.grad_checkpointing;
  p.weights = weight_tensors(r, r.o.mode == Mode::Qlora ? 4 : r.w.weight);
  if (p.lora) {  // the adapters' A and B, fp32, as one layer's share
    const u64 per_layer = r.s.adapter_params / std::max<u64>(r.m.num_layers, 1);
    p.grads.layer = {mul(per_layer / 2, 4), mul(per_layer - per_layer / 2, 4)};
    for (u64 g : p.grads.layer) p.weights.layer.push_back(g);
  } else {
    p.grads = weight_tensors(r, r.w.weight);
    if (r.m.tie_word_embeddings && !p.grads.embed.empty()) p.tied_embedding = p.grads.embed.front();
  }
  for (const auto& [kind, count] : layer_kinds(r.m)) {
    std::vector<u64> one;
    for (u64 b : tensor_bytes_per_token(describe_layer(r.m, attention_path(r.m, r.o, kind), r.o.seq, kind), r.w, r.o, r.targets, tp)) {
      one.push_back(mul(b, tokens));
    }
    for (u64 i = 0; i < count; ++i) p.layer_saved.push_back(one);
  }
  for (u64 b : tensor_bytes_per_token(describe_head(r.m), r.w, r.o, r.targets, 1)) p.head_saved.push_back(mul(b, tokens));
  p.residual = mul(mul(tokens, r.m.hidden_size), r.w.wide);
  p.logits_act = mul(mul(logit_tokens, V), r.w.act);
  p.logits_fp32 = mul(mul(logit_tokens, V), 4);
  p.softcap = r.m.final_logit_softcap > 0 ? p.logits_act : 0;
  const bool adam = r.o.optimizer == Optimizer::AdamW || r.o.optimizer == Optimizer::Adam;
  p.states_per_tensor = adam ? 2 : r.o.optimizer == Optimizer::SgdMomentum ? 1 : 0;
  p.foreach_temporaries = adam;
  return p;
}

// The bytes of each tensor a layer keeps, in the order forward() allocates them.
std::vector<u64> layer_order(const TrainPlan& p, std::size_t l) {
  std::vector<u64> bytes = p.weights.layer_casts;
  bytes.insert(bytes.end(), p.layer_saved[l].begin(), p.layer_saved[l].end());
  return bytes;
}

void forward(Sequence& s, const TrainPlan& p, std::vector<std::vector<u64>>& saved, std::vector<u64>& checkpoints) {
  u64 residual = s.alloc(p.residual);
  for (std::size_t l = 0; l < p.layer_saved.size(); ++l) {
    std::vector<u64> ids;
    for (u64 b : layer_order(p, l)) ids.push_back(s.alloc(b));
    const u64 out = s.alloc(p.residual);
    if (p.checkpointing) {
      checkpoints.push_back(residual);
      s.free(ids);
    } else {
      s.free(residual);
    }
    saved.push_back(std::move(ids));
    residual = out;
  }
  std::vector<u64> head;
  for (u64 b : p.head_saved) head.push_back(s.alloc(b));
  head.push_back(s.alloc(p.weights.lm_head_cast));
  saved.push_back(std::move(head));
  s.free(residual);
}

// The loss: lm_head's output, soft-capping, the fp32 copy and log_softmax (saved); backward's
// fp32 gradients, then the 16-bit gradient of the logits.
u64 loss_and_its_gradient(Sequence& s, const TrainPlan& p) {
  const u64 logits = s.alloc(p.logits_act), tanh = s.alloc(p.softcap);
  const u64 upcast = p.logits_act == p.logits_fp32 ? 0 : s.alloc(p.logits_fp32);
  const u64 log_probs = s.alloc(p.logits_fp32);
  s.free(upcast), s.free(logits);
  const u64 nll_grad = s.alloc(p.logits_fp32), lsm_grad = s.alloc(p.logits_fp32);
  s.free(nll_grad), s.free(log_probs);
  const u64 grad16 = p.logits_act == p.logits_fp32 ? 0 : s.alloc(p.logits_act);
  s.free(lsm_grad), s.free(tanh);
  return grad16;
}

void train_step(Sequence& s, const TrainPlan& p, bool first, std::vector<u64>& states) {
  std::vector<std::vector<u64>> saved, saved_bytes;
  std::vector<u64> checkpoints, grads;
  if (first) s.alloc(kCublasWorkspace);  // the first workspace: at the first forward matmul (traces)
  forward(s, p, saved, checkpoints);
  for (std::size_t l = 0; l < p.layer_saved.size(); ++l) saved_bytes.push_back(layer_order(p, l));
  const u64 logits_grad = loss_and_its_gradient(s, p);
  for (u64 g : p.grads.head) grads.push_back(s.alloc(g));
  const u64 tied_head_grad = s.alloc(p.tied_embedding);  // lm_head's share of a tied weight's gradient
  u64 dx = s.alloc(p.residual);
  if (first) s.alloc(kCublasWorkspace);  // the second workspace: at lm_head's backward matmuls (traces)
  s.free(logits_grad);
  s.free(saved.back());
  for (std::size_t l = p.layer_saved.size(); l-- > 0;) {
    if (p.checkpointing) {
      for (u64 b : saved_bytes[l]) saved[l].push_back(s.alloc(b));
    }
    // Autograd walks the layer's ops backwards: each frees its saved operands as it makes its
    // gradients, so the weight gradients land in the holes the activations leave.
    // Each saved activation's gradient has its shape: made, used by the next op back, then freed.
    const u64 next_dx = s.alloc(p.residual);
    std::size_t g = 0;
    u64 previous = 0;
    for (std::size_t i = saved[l].size(); i-- > 0;) {
      const u64 grad = s.alloc(saved_bytes[l][i]);
      s.free(previous);
      previous = grad;
      s.free(saved[l][i]);
      if (g < p.grads.layer.size()) grads.push_back(s.alloc(p.grads.layer[g++]));
    }
    s.free(previous);
    for (; g < p.grads.layer.size(); ++g) grads.push_back(s.alloc(p.grads.layer[g]));
    saved[l].clear();
    s.free(dx);
    dx = next_dx;
    if (p.checkpointing) s.free(checkpoints[l]);
  }
  for (u64 g : p.grads.embed) grads.push_back(s.alloc(g));
  if (tied_head_grad != 0) {  // AccumulateGrad sums the two shares into a new tensor
    grads.push_back(s.alloc(p.tied_embedding));
    s.free(tied_head_grad), s.free(grads[grads.size() - 2]);
  }
  s.free(dx);
  // optimizer state and foreach temporaries in model.parameters() order: embeddings, layers, head
  std::vector<u64> trainable = p.grads.embed;
  for (std::size_t l = 0; l < p.layer_saved.size(); ++l) trainable.insert(trainable.end(), p.grads.layer.begin(), p.grads.layer.end());
  trainable.insert(trainable.end(), p.grads.head.begin(), p.grads.head.end());
  if (first) {
    for (u64 b : trainable) {
      for (u64 k = 0; k < p.states_per_tensor; ++k) states.push_back(s.alloc(b));
    }
  }
  if (p.foreach_temporaries) {  // _foreach_sqrt(exp_avg_sq): one temporary per parameter
    std::vector<u64> temps;
    for (u64 b : trainable) temps.push_back(s.alloc(b));
    s.free(temps);
  }
  s.free(grads);  // zero_grad(set_to_none=True)
}

void inference(Sequence& s, const Run& r) {
  const u64 tokens = mul(r.o.batch, r.o.seq), tp = r.o.tensor_parallel, act = r.w.act;
  const u64 kv = kv_bytes_per_token_layer(r), residual = mul(mul(tokens, r.m.hidden_size), r.w.wide);
  const u64 q = mul(r.m.num_heads, r.m.head_dim) / tp;
  const u64 mlp = mul(mul(tokens, r.m.num_experts > 0 ? mul(r.m.moe_intermediate_size, r.m.experts_per_token) : r.m.intermediate_size / tp), act);
  std::vector<u64> cache;
  u64 hidden = s.alloc(residual);
  s.alloc(kCublasWorkspace);  // inference needs one workspace (the traces hold one 32 MiB block)
  for (u64 l = 0; l < r.m.num_layers; ++l) {
    cache.push_back(s.alloc(mul(tokens, kv) / 2));
    cache.push_back(s.alloc(mul(tokens, kv) - mul(tokens, kv) / 2));
    const u64 attn = s.alloc(mul(mul(tokens, q), act)), deq = s.alloc(mul(r.s.dequant_elements, act));
    const u64 mid = s.alloc(residual);
    s.free(attn), s.free(deq), s.free(hidden);
    std::vector<u64> m3 = {s.alloc(mlp), s.alloc(mlp), s.alloc(mlp)};
    hidden = s.alloc(residual);
    s.free(m3), s.free(mid);
  }
  const u64 logit_rows = r.o.logits_last_only || r.o.new_tokens > 0 ? r.o.batch : tokens;
  const u64 normed = s.alloc(mul(mul(tokens, r.m.hidden_size), act));
  const u64 logits = s.alloc(mul(mul(logit_rows, r.m.vocab_size / tp), act));
  s.free(normed), s.free(hidden);
  for (u64 t = 1; t <= r.o.new_tokens; ++t) {  // DynamicCache: torch.cat into a one-token-longer tensor
    for (u64& id : cache) {
      const u64 grown = s.alloc(mul(mul(r.o.batch, r.o.seq + t), kv) / 2);
      s.free(id);
      id = grown;
    }
  }
  s.free(logits);
}

}  // namespace

std::vector<AllocEvent> step_events(const Run& r) {
  Sequence s;
  if (!trains(r.o)) {
    for (u64 b : weight_tensors(r, r.w.weight).embed) s.alloc(b);
    const Tensors t = weight_tensors(r, r.w.weight);
    for (u64 l = 0; l < r.m.num_layers; ++l) {
      for (u64 b : t.layer) s.alloc(b);
    }
    for (u64 b : t.head) s.alloc(b);
    inference(s, r);
    return s.take();
  }
  const TrainPlan p = train_plan(r);
  for (u64 b : p.weights.embed) s.alloc(b);
  for (std::size_t l = 0; l < p.layer_saved.size(); ++l) {
    for (u64 b : p.weights.layer) s.alloc(b);
  }
  for (u64 b : p.weights.head) s.alloc(b);
  std::vector<u64> states;
  for (int step = 0; step < 3; ++step) train_step(s, p, step == 0, states);
  return s.take();
}

}  // namespace vramdoc::estimator::detail
