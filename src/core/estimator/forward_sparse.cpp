// A forward op by op (see forward_ops.hpp): Pegasus-X's block-local self-attention with global tokens
// (modeling_pegasus_x.py PegasusXGlobalLocalAttention, transformers 5.17), read with round 4's pegasusx-b traces
// (docs/results/families-h200-2026-12-02-r4/): the sequence padded to a multiple of block_size K, each
// block's queries attending to the G global tokens and to their own block (never seq x seq); every second
// layer (stagger_local_blocks) pads K / 2 tokens at each end first, one block more.
#include <algorithm>
#include <array>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

}  // namespace

// PegasusXEncoderLayer.pad_local_tokens (staggered layers): the normed input padded to L = S + K rows, which the
// projections read; q_proj(x) * scaling out of place; _shape's contiguous (batch, heads, L, dim) copies of q, k,
// v (the einsums save them; the projections' outputs `qkv`, temporaries, freed); the global tokens' own (G rows);
// compute_global_attention_representations: k and v concatenated after the global ones (G + L rows, saved),
// the global queries' scores (batch, heads, G, G + L), the mask added out of place, softmax (saved), the output; compute_local_attention_representations: per
// block the scores against the global keys (K x G) and the block's keys (K x K), concatenated (K x (G + K)),
// the mask added out of place, softmax (saved: its two slices feed the value einsums as views), the two outputs
// and their sum; permute(0, 2, 3, 1, 4).contiguous() of the local output: the merged heads. The products and
// outputs are compute_local_attention_representations' locals, alive to its return; the probabilities are
// returned (`held`).
u64 global_local_attention(Forward& f, const LayerDims& d, bool staggered, const std::array<u64, 3>& qkv, u64& held) {
  const ModelConfig& m = f.r.m;
  const u64 K = std::max<u64>(m.enc.local_block, 1), G = m.enc.global_tokens;
  const u64 S = mul((f.q_len + K - 1) / K, K), L = staggered ? saturating_add(S, K) : S, N = L / K;
  const u64 bh = mul(f.batch, d.heads), act = f.act;
  const auto rows = [&](u64 n) { return mul(mul(bh, n), mul(d.head_dim, act)); };  // (batch, heads, n, dim)
  const u64 padded = staggered ? f.s.alloc(mul(mul(f.batch, L), mul(d.h, act))) : 0;
  if (f.weights_train()) f.keep(padded);
  // the projections' outputs beyond the S rows projections() made (the padded blocks)
  const u64 extra = staggered ? f.s.alloc(mul(3, mul(mul(f.batch, K), mul(d.q, act)))) : 0;
  const u64 scaled = f.s.alloc(rows(L));
  std::vector<u64> local;
  for (int i = 0; i < 3; ++i) local.push_back(f.s.alloc(rows(L))), f.keep(local.back());
  f.drop(scaled);
  for (u64 id : qkv) f.drop(id);  // the projections' outputs: temporaries of _shape's calls
  f.s.free(extra);
  std::vector<u64> global;
  for (int i = 0; i < 4; ++i) global.push_back(f.s.alloc(rows(G))), f.keep(global.back());  // projections' outputs
  const u64 gk = f.s.alloc(rows(G + L)), gv = f.s.alloc(rows(G + L));
  f.keep(gk), f.keep(gv);
  const u64 gscores = mul(mul(bh, G), mul(G + L, act));
  const u64 graw = f.s.alloc(gscores), gmasked = f.s.alloc(gscores);
  f.drop(graw);
  const u64 gprobs = f.s.alloc(gscores);
  f.keep(gprobs), f.drop(gmasked);
  const u64 gout = f.s.alloc(rows(G));
  const u64 blocks = mul(mul(bh, N), K);  // query rows of all blocks
  const u64 to_global = f.s.alloc(mul(blocks, mul(G, act))), to_local = f.s.alloc(mul(blocks, mul(K, act)));
  const u64 cat = f.s.alloc(mul(blocks, mul(G + K, act)));
  const u64 masked = f.s.alloc(mul(blocks, mul(G + K, act)));
  f.drop(cat);
  const u64 probs = f.s.alloc(mul(blocks, mul(G + K, act)));
  f.keep(probs);
  const u64 out_global = f.s.alloc(rows(L)), out_local = f.s.alloc(rows(L)), sum = f.s.alloc(rows(L));
  f.drop(out_global), f.drop(out_local), f.drop(to_global), f.drop(to_local), f.drop(masked);  // its return
  const u64 merged = f.s.alloc(rows(L));
  held = probs;  // returned in attn_probs: PegasusXEncoderLayer's `_` holds it to the layer's end
  f.drop(sum), f.drop(gprobs), f.drop(gk), f.drop(gv), f.drop(local), f.drop(global), f.s.free(gout);
  f.drop(padded);
  return merged;
}

// BigBird's block-sparse attention (modeling_big_bird.py BigBirdBlockSparseAttention.bigbird_block_sparse_attention):
// nb blocks of K tokens (the sequence padded to K), r random blocks per query block. Every product, mask sum and
// softmax is a Python local held to the function's return. The first and last query blocks against all keys
// (K x S scores, scaled, softmax: saved); the second and second-last against 4 + r blocks (the keys and values
// concatenated: saved; the random mask's minimum, 1 -, x penalty); the M = nb - 4 middle blocks: keys and
// values of 3 blocks each concatenated (saved), the middle queries copied by each matmul's reshape (saved in
// training), the band (3K), random (rK), first and last (K) products scaled, the random mask's 1 - and x
// penalty, the products concatenated ((5 + r) K) and their softmax (saved), its slices copied by the value
// matmuls (saved in training), the four contexts summed in place; the rand_mask einsum (batch, heads, nb - 2, K,
// rK) first, the gathered keys and values (nb - 2 blocks of rK: saved); the contexts concatenated (the middle
// blocks' context_layer rebound), times from_mask, made contiguous.
// The masks from the blocked attention_mask (torch.ones: fp32) stay fp32: rand_mask and its 1 - / x penalty.
// Then attention_probs: a (batch, heads, S, S) zeros the weights are scattered into, returned as attn_weights
// (`held`: BigBirdLayer's `attention_output, _` holds it to the layer's end).
u64 block_sparse_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held) {
  const ModelConfig& m = f.r.m;
  const u64 K = std::max<u64>(m.enc.sparse_block, 1), r = m.enc.random_blocks;
  const u64 S = mul((f.q_len + K - 1) / K, K), nb = S / K, M = nb > 4 ? nb - 4 : 0;
  const u64 bh = mul(f.batch, d.heads), act = f.act;
  const auto rows = [&](u64 n) { return mul(mul(bh, n), mul(d.head_dim, act)); };     // (batch, heads, n, dim)
  const auto sc = [&](u64 n, u64 cols, u64 width = 0) {  // (batch, heads, n, cols)
    return mul(mul(bh, n), mul(cols, width != 0 ? width : act));
  };
  constexpr u64 kMask = 4;  // the blocked attention_mask's dtype (fp32)
  std::vector<u64> locals;
  const auto local = [&](u64 bytes, bool saved) {
    locals.push_back(f.s.alloc(bytes));
    if (saved) f.keep(locals.back());
    return locals.back();
  };
  f.keep(q), f.keep(k), f.keep(v);
  local(sc(mul(nb - std::min<u64>(nb, 2), K), mul(r, K), kMask), false);  // rand_mask
  local(rows(mul(nb - std::min<u64>(nb, 2), mul(r, K))), true);      // gathered_key
  local(rows(mul(nb - std::min<u64>(nb, 2), mul(r, K))), true);      // gathered_value
  const auto scaled_softmax = [&](u64 n, u64 cols, bool random_mask) {  // product, * rsqrt_d, += mask, softmax
    const u64 product = f.s.alloc(sc(n, cols));
    if (random_mask) {  // (1.0 - torch.minimum(seq_pad, rand_pad)) * attn_mask_penalty, rand_pad with heads
      local(sc(n, cols, kMask), false);
      const u64 low = f.s.alloc(sc(n, cols, kMask)), inv = f.s.alloc(sc(n, cols, kMask));
      f.s.free(low);
      const u64 pen = f.s.alloc(sc(n, cols, kMask));
      f.s.free(inv), f.s.free(pen);
    }
    local(sc(n, cols), false);
    f.s.free(product);
    local(sc(n, cols), true);  // the weights
    local(rows(n), false);     // the block's context
  };
  scaled_softmax(K, S, false);  // q[0] against every key
  for (int side = 0; side < 2; ++side) {
    local(rows(mul(4 + r, K)), true), local(rows(mul(4 + r, K)), true);  // second_key_mat, second_value_mat
    scaled_softmax(K, mul(4 + r, K), true);
  }
  scaled_softmax(K, S, false);  // q[-1] against every key
  u64 context = 0;  // the middle blocks' context_layer
  if (M > 0) {
    const u64 mk = mul(M, K);
    local(rows(mul(M, 3 * K)), true), local(rows(mul(M, 3 * K)), true);  // exp_blocked_key_matrix, _value_matrix
    for (const u64 cols : {3 * K, mul(r, K), K, K}) {  // inner band, random, first and last band products
      const u64 copy = f.s.alloc(rows(mk));  // the middle queries' copy (matmul's reshape of a strided view)
      f.keep(copy);
      const u64 product = f.s.alloc(sc(mk, cols));
      f.drop(copy);
      local(sc(mk, cols), false);  // * rsqrt_d
      f.s.free(product);
    }
    // the random mask's 1 - and x penalty
    const u64 inv = f.s.alloc(sc(mk, mul(r, K), kMask)), pen = f.s.alloc(sc(mk, mul(r, K), kMask));
    f.s.free(inv), f.s.free(pen);
    local(sc(mk, mul(5 + r, K)), false);  // band_product
    local(sc(mk, mul(5 + r, K)), true);   // attn_weights
    context = f.s.alloc(rows(mk));
    for (const u64 cols : {3 * K, mul(r, K), K, K}) {
      const u64 slice = f.s.alloc(sc(mk, cols));  // the weights' slice, copied for the matmul (saved)
      f.keep(slice);
      if (cols != 3 * K) f.s.free(f.s.alloc(rows(mk)));  // its product, added in place
      f.drop(slice);
    }
  }
  const u64 cat = f.s.alloc(rows(S));  // rebinds context_layer
  f.s.free(context);
  const u64 masked = f.s.alloc(rows(S));
  f.s.free(cat);
  held = f.s.alloc(sc(S, S));  // attention_probs
  const u64 merged = f.s.alloc(rows(S));  // .contiguous() of the transposed context
  f.s.free(masked);
  for (auto it = locals.rbegin(); it != locals.rend(); ++it) f.drop(*it);
  return merged;
}

}  // namespace vramdoc::estimator::detail
