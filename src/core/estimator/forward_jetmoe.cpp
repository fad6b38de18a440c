// A forward op by op (see forward_ops.hpp): JetMoE's layer as transformers 5.17 runs it (modeling_jetmoe.py /
// modular_jetmoe.py): the mixture of attention heads (JetMoeAttention with JetMoeMoA's map and reduce) and the
// mixture of experts (JetMoeMoE), both routed by JetMoeTopKGating and computed by JetMoeParallelExperts (one F.linear
// per expert on its split of the gathered rows, torch.cat of their outputs). The layer around them (its RMSNorms and
// residual sums) is decoder_layer's (forward_layer.cpp). N tokens, k = num_experts_per_tok rows per token.
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// JetMoeTopKGating.forward: the router Linear's logits and their fp32 copy (N x experts), top-k's values and
// indices, softmax of the values (saved), the gates' scatter / long / sum (small), the sort of the flattened
// expert ids (index_sorted_experts), batch_index and batch_gates. The three per-row tensors (topo_info) are kept
// in `topo` to the caller's end; the rest goes at the router's return.
void route(Forward& f, u64 x, u64 experts, std::vector<u64>& topo) {
  const u64 k = std::max<u64>(f.r.m.experts_per_token, 1), h = f.r.m.hidden_size;
  const u64 logits = linear(f, x, h, experts, false, "router");
  const u64 up = f.s.alloc(f.bytes(experts, 4));
  f.drop(logits);
  const u64 values = f.s.alloc(f.bytes(k, 4)), indices = f.s.alloc(f.bytes(k, 8));
  const u64 gates = f.s.alloc(f.bytes(k, 4));
  f.keep(gates);
  const u64 typed = f.s.alloc(f.bytes(k, f.act)), scattered = f.s.alloc(f.bytes(experts, f.act));
  const u64 longs = f.s.alloc(f.bytes(experts, 8));
  f.s.free(longs), f.s.free(scattered);
  const u64 sorted = f.s.alloc(f.bytes(k, 8)), order = f.s.alloc(f.bytes(k, 8)), batch_index = f.s.alloc(f.bytes(k, 8));
  const u64 batch_gates = f.s.alloc(f.bytes(k, f.act));
  f.keep(batch_gates);  // expert_outputs * batch_gates[:, None] saves it
  f.s.free(sorted);
  for (u64 id : {up, values, indices, gates, typed}) f.drop(id);
  topo.insert(topo.end(), {order, batch_index, batch_gates});
}

// JetMoeParallelExperts.forward on `rows` rows per token (`x`, their gathered input, saved by the F.linear calls):
// the experts' outputs (out elements per row, alive together) and their torch.cat, which is returned.
u64 parallel_experts(Forward& f, u64 x, u64 rows, u64 out) {
  if (f.weights_train()) f.keep(x);
  const u64 parts = f.s.alloc(f.bytes(mul(rows, out), f.act)), cat = f.s.alloc(f.bytes(mul(rows, out), f.act));
  f.s.free(parts);
  return cat;
}

// The experts' outputs `y` (k x N rows of h) times batch_gates (the product saves `y`), index_add into zeros (N x h;
// out of place), + bias: the merged output.
u64 merge(Forward& f, u64 y, u64 k, u64 h) {
  f.keep(y);
  const u64 weighted = f.s.alloc(f.bytes(mul(k, h), f.act));
  f.drop(y);
  const u64 zeros = f.s.alloc(f.bytes(h, f.act)), added = f.s.alloc(f.bytes(h, f.act));
  f.s.free(zeros), f.drop(weighted);
  const u64 out = f.s.alloc(f.bytes(h, f.act));
  f.drop(added);
  return out;
}

}  // namespace

u64 moa_attention(Forward& f, LayerKind kind, u64 input, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const LayerDims d = layer_dims(f.r);
  const u64 k = std::max<u64>(m.experts_per_token, 1), h = d.h, M = d.kv;  // M: one expert's query width
  std::vector<u64> topo;
  // JetMoeMoA.map: the router, layer_input[batch_index] (k x N rows of h), the experts' queries, index_add back into
  // zeros in token order: (batch, seq, k, M), viewed as (batch, heads, seq, head_dim)
  route(f, input, m.attention_experts, topo);
  const u64 rows = f.s.alloc(f.bytes(mul(k, h), f.act));
  const u64 queries = parallel_experts(f, rows, k, M);
  f.drop(rows);
  const u64 zeros = f.s.alloc(f.bytes(mul(k, M), f.act)), q = f.s.alloc(f.bytes(mul(k, M), f.act));
  f.s.free(zeros), f.drop(queries);
  const u64 kv = linear(f, input, h, 2 * M, false, "kv_proj");  // key_states, value_states: its chunks
  const bool roped = d.rotary > 0 && !kind.nope;
  const u64 q_rot = roped ? rope(f, mul(d.heads, d.rotary), f.act, f.act) : q;
  u64 k_rot = roped ? rope(f, mul(d.kv_heads, d.rotary), f.act, f.act) : kv;
  if (f.use_cache) {  // DynamicCache's first update: copies of the rotated keys and of the values
    cache[0] = f.s.alloc(f.bytes(M, f.act), Use::Cache), cache[1] = f.s.alloc(f.bytes(M, f.act), Use::Cache);
    if (k_rot != kv) f.drop(k_rot);
    k_rot = cache[0];  // (the values' copy is cache[1])
  }
  // key_states.repeat(1, top_k, 1, 1), value_states likewise: copies with every query head's keys (saved by SDPA)
  const u64 keys = f.s.alloc(f.bytes(mul(k, M), f.act)), values = f.s.alloc(f.bytes(mul(k, M), f.act));
  if (!f.use_cache && k_rot != kv) f.drop(k_rot);
  f.drop(kv);
  // sdpa_attention_forward (no mask: is_causal, the flash kernel): q, keys, values, its output saved; the output's
  // transpose(1, 2).contiguous()
  for (u64 id : {q_rot, keys, values}) f.keep(id);
  const u64 raw = f.s.alloc(f.bytes(mul(k, M), f.act));
  f.keep(raw);
  const u64 merged = f.s.alloc(f.bytes(mul(k, M), f.act));
  f.drop(raw), f.drop(keys), f.drop(values);
  if (q_rot != q) f.drop(q_rot);
  f.drop(q);
  // JetMoeMoA.reduce: layer_input[index_sorted_experts] (k x N rows of M), the output experts, the gates, index_add
  const u64 gathered = f.s.alloc(f.bytes(mul(k, M), f.act));
  f.drop(merged);
  const u64 outputs = parallel_experts(f, gathered, k, h);
  f.drop(gathered);
  const u64 out = merge(f, outputs, k, h);
  for (u64 id : topo) f.drop(id);
  return out;
}

u64 jetmoe_moe(Forward& f, u64 x, u64 h) {
  const ModelConfig& m = f.r.m;
  const u64 k = std::max<u64>(m.experts_per_token, 1), inter = m.moe_intermediate_size;
  std::vector<u64> topo;
  route(f, x, m.num_experts, topo);
  const u64 rows = f.s.alloc(f.bytes(mul(k, h), f.act));  // layer_input[batch_index]
  const u64 hidden = parallel_experts(f, rows, k, 2 * inter);
  f.drop(rows);
  f.keep(hidden);  // activation(chunk 0) saves its input, the product chunk 1
  const u64 act = f.s.alloc(f.bytes(mul(k, inter), f.act));
  f.keep(act);
  const u64 product = f.s.alloc(f.bytes(mul(k, inter), f.act));
  f.drop(act), f.drop(hidden);
  const u64 outputs = parallel_experts(f, product, k, h);
  f.drop(product);
  const u64 out = merge(f, outputs, k, h);
  for (u64 id : topo) f.drop(id);
  return out;
}

}  // namespace vramdoc::estimator::detail
