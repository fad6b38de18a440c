// A forward op by op (see forward_ops.hpp) for LongT5's encoder self-attention (modeling_longt5.py,
// transformers 5.17): LongT5LocalAttention (encoder_attention_type "local") and
// LongT5TransientGlobalAttention ("transient-global"). Each query block of block_len = local_radius + 1
// tokens attends to its own and its two neighbouring blocks (3 x block_len keys), the transient-global
// variant also to one aggregate per global_block_size tokens (seq // global_block_size "side" keys), never
// to the whole sequence: the scores are (batch, blocks, heads, block_len, 3 x block_len [+ globals]).
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

}  // namespace

// `n` is the layer norm's output (the attention's input), q, k, v its projections (batch x seq x heads x d_kv);
// returns the heads merged (unshape's contiguous copy), ready for o. The stack's first layer makes the
// position bias (f.position_bias: the encoder keeps it to its return, as T5's).
u64 longt5_local_attention(Forward& f, const LayerDims& d, u64 n, u64 q, u64 k, u64 v) {
  const ModelConfig& m = f.r.m;
  const u64 block = m.enc.local_block_len, seq = f.q_len;
  const u64 blocks = (seq + block - 1) / block, padded = mul(blocks, block);
  const u64 globals = m.enc.global_block_size > 0 ? seq / m.enc.global_block_size : 0;
  const u64 keys = saturating_add(mul(3, block), globals);  // the scores' last dimension
  std::vector<u64> locals;  // the forward's Python locals, alive to its return
  f.q_len = padded;
  // _split_into_blocks: F.pad to a multiple of block_len (a copy) when the sequence is not one
  if (padded != seq) {
    for (u64* x : {&q, &k, &v}) {
      const u64 p = f.s.alloc(f.bytes(d.q, f.act));
      locals.push_back(*x), *x = p;
    }
  }
  // _concatenate_3_blocks: F.pad by one block each side (blocks + 2), then torch.cat of three slices:
  // (batch, blocks, 3 x block_len, heads, d_kv) for keys and values
  u64 k3 = 0, v3 = 0;
  for (u64* out : {&k3, &v3}) {
    const u64 pad = f.s.alloc(mul(mul(saturating_add(blocks, 2), block), mul(f.batch, mul(d.kv, f.act))));
    *out = f.s.alloc(mul(3, f.bytes(d.kv, f.act)));
    f.s.free(pad);
  }
  if (globals > 0) {
    // _make_global_fixed_block_ids (float and int tensors of batch x seq), _create_global_aggregates: one_hot
    // (int64, batch x seq x (globals + 1)), its slice cast to the hidden dtype, einsum -> (batch, globals, d_model);
    // global_input_layer_norm; self.k / self.v of the aggregates; torch.tile over the blocks; torch.cat onto the
    // local keys and values -> (batch, blocks, 3 x block_len + globals, heads, d_kv)
    const u64 one_hot = f.s.alloc(mul(mul(f.batch, seq), mul(saturating_add(globals, 1), 8)));
    const u64 hot = f.s.alloc(mul(mul(f.batch, seq), mul(globals, f.act)));
    f.s.free(one_hot);
    f.keep(hot), f.keep(n);
    const u64 q_len = f.q_len;
    f.q_len = globals;
    const u64 aggregates = f.s.alloc(f.bytes(d.h, f.act));
    f.drop(hot);
    const u64 normed = t5_norm(f, aggregates, d.h, f.act);
    f.drop(aggregates);
    const u64 side_k = linear(f, normed, d.h, d.kv, false, "SelfAttention.k");
    const u64 side_v = linear(f, normed, d.h, d.kv, false, "SelfAttention.v");
    f.drop(normed);
    f.q_len = q_len;
    const u64 tiled = mul(blocks, mul(mul(f.batch, globals), mul(d.kv, f.act)));
    for (u64* out : {&k3, &v3}) {
      const u64 tile = f.s.alloc(tiled);
      const u64 cat = f.s.alloc(saturating_add(f.s.bytes_of(*out), tiled));
      f.s.free(tile), f.s.free(*out);
      *out = cat;
    }
    f.drop(side_k), f.drop(side_v);
  }
  // scores = einsum("...qhd,...khd->...hqk"): bmm over (batch x blocks x heads) of contiguous q and k copies
  // (saved), the scores in the activations' dtype
  f.kv_len = keys;
  const u64 qc = f.s.alloc(f.bytes(d.q, f.act)), kc = f.s.alloc(f.s.bytes_of(k3));
  f.keep(qc), f.keep(kc);
  const u64 scores = f.s.alloc(f.scores(d.heads, f.act));
  f.drop(qc), f.drop(kc);
  if (f.position_bias == 0) {
    // compute_bias(block_len): int64 relative positions and buckets of block_len x 3 block_len (small), the
    // embedding's lookup; + the local mask made additive (torch.where(mask > 0, 0.0, -1e4): fp32, batch x blocks
    // x block_len x 3 block_len) broadcast over the heads: an fp32 (batch, blocks, heads, block_len, 3 block_len);
    // transient-global: compute_side_bias (fp32 batch x heads x seq x globals), torch.cat onto it
    const u64 local = mul(mul(f.batch, padded), mul(3, block));
    const u64 mask = f.s.alloc(mul(local, 4));
    u64 bias = f.s.alloc(mul(mul(local, d.heads), 4));
    f.s.free(mask);
    if (globals > 0) {
      const u64 side = mul(mul(f.batch, seq), mul(globals, d.heads));
      const u64 buckets = f.s.alloc(mul(mul(f.batch, seq), mul(globals, 8)));
      const u64 lookup = f.s.alloc(mul(side, f.r.w.weight));
      f.s.free(buckets);
      const u64 side_bias = f.s.alloc(mul(side, 4));
      f.s.free(lookup);
      const u64 cat = f.s.alloc(saturating_add(f.s.bytes_of(bias), mul(side, 4)));
      f.s.free(side_bias), f.s.free(bias);
      bias = cat;
    }
    f.position_bias = bias;
  }
  // scores += position_bias (in place); softmax(scores.float()) (the fp32 copy a temporary, the output saved),
  // .type_as(scores) (a copy), dropout (mask and output saved), einsum with the values: bmm of the weights and
  // a contiguous copy of the values (saved), then unshape's contiguous copy
  const u64 up = f.act == 4 ? scores : f.s.alloc(f.scores(d.heads, 4));
  const u64 probs = f.s.alloc(f.scores(d.heads, 4));
  f.keep(probs);
  if (up != scores) f.s.free(up);
  u64 weights = f.act == 4 ? probs : f.s.alloc(f.scores(d.heads, f.act));
  if (weights != probs) f.drop(probs);
  // attn_weights = dropout(attn_weights): the rebinding frees the undropped copy
  weights = dropout(f, weights, mul(d.heads, keys), f.act, m.attention_dropout);
  f.keep(weights);
  const u64 vc = f.s.alloc(f.s.bytes_of(v3));
  f.keep(vc);
  const u64 context = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(vc);
  const u64 merged = f.s.alloc(f.bytes(d.q, f.act));
  f.s.free(context);
  for (u64 id : {scores, weights, k3, v3}) f.drop(id);
  for (u64 id : locals) f.drop(id);
  f.q_len = seq;
  return merged;
}

}  // namespace vramdoc::estimator::detail
