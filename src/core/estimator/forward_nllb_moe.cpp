// A forward op by op (see forward_ops.hpp): NLLB-MoE's sparse feed-forward, NllbMoeSparseMLP.forward as
// transformers 5.17 runs it (modeling_nllb_moe.py:165-384): NllbMoeTop2Router in router_dtype (fp32), then
// NllbMoeExperts.forward, which builds its expert mask as one_hot(top_1_mask, num_classes=num_experts) of the router's
// 0/1 top-1 mask (:351). The "experts" hit are therefore the mask's values: expert_0 runs on every (token, expert)
// pair whose top-1 mask is 0 (num_experts x tokens minus the routed ones, their combine weight mostly 0) and expert_1
// on the routed pairs. Each call gathers its rows (hidden_states[None, top_x]), runs fc1, the activation, fc2, the
// product with the combine weights and, in training, moe_token_dropout, and index_add_s into the zeros_like output.
// Routed pairs: each expert keeps at most its capacity of the tokens whose top-1 choice it is (expert_capacity in
// training, moe_eval_capacity_token_fraction x tokens in inference); the estimate assumes a balanced router (tokens /
// num_experts each), so min(tokens, num_experts x capacity) pairs are routed.
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// The (token, expert) pairs the router keeps: a balanced top-1 choice capped at each expert's capacity.
u64 routed_pairs(const Forward& f, u64 tokens, u64 experts) {
  const EncoderParts& e = f.r.m.enc;
  const u64 balanced = 2 * ((tokens + experts - 1) / experts);  // capacity when expert_capacity is None
  const double eval = e.eval_capacity_fraction * static_cast<double>(tokens);
  const u64 capacity = f.train ? (e.expert_capacity > 0 ? e.expert_capacity : balanced)
                               : (e.eval_capacity_fraction > 0 ? static_cast<u64>(eval + 0.999999) : balanced);
  return std::min(tokens, mul(experts, capacity));
}

}  // namespace

u64 nllb_sparse_mlp(Forward& f, u64 x, u64 h, u64 inter) {
  const u64 T = f.tokens(), E = std::max<u64>(f.r.m.enc.experts, 1), act = f.act;
  (void)x;  // the gathers read it; the layer frees it
  // NllbMoeTop2Router.forward: hidden_states.to(float32) (saved by the fp32 classifier), the logits and softmax (T, E)
  const u64 up = f.s.alloc(f.bytes(h, 4));
  if (f.weights_train()) f.keep(up);
  const u64 probs = f.s.alloc(f.bytes(E, 4));
  f.keep(probs);
  f.drop(up);
  const u64 ones = routed_pairs(f, T, E), zeros = mul(E, T) - ones;
  const u64 out = f.s.alloc(f.bytes(h, act));             // torch.zeros_like(hidden_states)
  const u64 one_hot = f.s.alloc(mul(mul(T, E), mul(E, 8)));  // expert_mask: int64 (T, E, E), a local to the return
  for (u64 rows : {zeros, ones}) {  // expert_0 on the unrouted pairs, expert_1 on the routed ones
    if (rows == 0) continue;
    const u64 where = f.s.alloc(mul(rows, 16));  // torch.where's (idx, top_x): the gather and index_add_ save top_x
    f.keep(where);
    const u64 state = f.s.alloc(mul(rows, mul(h, act)));  // hidden_states[None, top_x]
    if (f.weights_train()) f.keep(state);
    const u64 cast1 = f.weight_cast(mul(mul(h, inter), 2));
    const u64 fc1 = f.s.alloc(mul(rows, mul(inter, act)));
    f.release_cast(cast1);
    const u64 a = f.s.alloc(mul(rows, mul(inter, act)));  // the activation (relu saves its output: fc2's input)
    f.keep(a);
    f.drop(fc1);
    const u64 cast2 = f.weight_cast(mul(mul(h, inter), 2));
    const u64 fc2 = f.s.alloc(mul(rows, mul(h, act)));
    f.release_cast(cast2);
    f.drop(a);
    const u64 weights = f.s.alloc(mul(rows, act));  // router_probs[top_x, idx, None]
    f.keep(fc2), f.keep(weights);
    u64 y = f.s.alloc(mul(rows, mul(h, act)));
    f.drop(fc2), f.drop(weights);
    if (f.train && f.r.m.enc.expert_token_dropout > 0) {  // self.token_dropout: its mask saved
      const u64 mask = f.s.alloc(mul(rows, h));
      f.keep(mask);
      const u64 dropped = f.s.alloc(mul(rows, mul(h, act)));
      f.drop(y), y = dropped;
    }
    f.drop(y), f.drop(state), f.drop(where);  // index_add_ into the output, in place
  }
  f.s.free(one_hot);
  f.drop(probs);
  return out;
}

}  // namespace vramdoc::estimator::detail
