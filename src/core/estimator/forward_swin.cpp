// A forward op by op (see forward_ops.hpp) for Swin: its stages of window-attention blocks at the
// stage's width and tokens, the cyclic shift, the patch merging between stages, as modeling_swin.py
// (transformers 5.17) and PyTorch 2.11 run them. Read off the traces of
// docs/results/families-h200-2026-12-01-b/ (023 swin-s inference, 024 training, 025 checkpointed).
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// Stage s: width embed_dim x 2^s, num_heads[s], a grid of (image / patch) / 2^s patches a side (odd
// sides rounded up by the merging's padding), windows of window_size (the whole grid when it is no
// larger: set_shift_and_window_size, which also turns the shift off), the grid padded to whole windows.
struct SwinStage {
  u64 width, heads, side, window, padded;
  bool shift;
};

SwinStage stage_of(const Forward& f, LayerKind kind) {
  const ModelConfig& m = f.r.m;
  SwinStage s{};
  const std::size_t i = std::min<std::size_t>(kind.stage, m.enc.stage_depths.size() - 1);
  s.width = m.hidden_size << i, s.heads = m.enc.stage_heads[i];
  const u64 image = f.r.o.image_size ? f.r.o.image_size : m.enc.image_size;
  s.side = std::max<u64>(image / std::max<u64>(m.enc.patch_size, 1), 1);
  for (std::size_t k = 0; k < i; ++k) s.side = (s.side + 1) / 2;
  s.window = std::min(std::max<u64>(m.enc.window, 1), s.side);
  s.shift = kind.shifted && s.side > s.window;
  s.padded = (s.side + s.window - 1) / s.window * s.window;
  return s;
}

// SwinAttention over the windows (`windows`: batch x windows x window^2 tokens, in `f.q_len` per
// image): q, k, v; the relative position bias (small) and, for a shifted block, the shift's mask
// expanded to every window and their sum (batch x windows x heads x window^4; autocast's 16-bit copy
// for SDPA; in training the memory-efficient kernel's aligned copy, its last dim padded to a multiple
// of 8, is what it saves); SDPA's output (saved with q, k, v and logsumexp); o. Returns o's output.
// Swin V2's Swinv2SelfAttention (modeling_swinv2.py:389, eager whatever attn_implementation says): cosine
// attention, normalize(q) @ normalize(k)^T (matmul saves both normalized copies), times the clamped exp of
// logit_scale (a parameter: mul saves the raw scores), + 16 sigmoid(cpb_mlp(coords)) (a new scores-sized
// tensor), in a shifted block the window mask added twice (two more), softmax (saves its output), matmul with
// v (saves the probabilities and v), permute(0, 2, 1, 3).contiguous(). Returns the merged context.
u64 cosine_attention(Forward& f, const SwinStage& st, u64 q, u64 k, u64 v, u64 windows_total, u64 per_window) {
  const u64 c = st.width, scores = mul(mul(mul(windows_total, per_window), st.heads), f.act);
  const u64 qn = f.s.alloc(f.bytes(c, f.act)), kn = f.s.alloc(f.bytes(c, f.act));
  for (u64 id : {q, k, v, qn, kn}) f.keep(id);  // normalize saves its input; matmul its operands
  const u64 raw = f.s.alloc(scores);
  f.keep(raw);
  const u64 scaled = f.s.alloc(scores);
  f.drop(raw);
  u64 biased = f.s.alloc(scores);
  f.s.free(scaled);
  for (int i = 0; st.shift && i < 2; ++i) {  // attention_scores + attention_mask, twice (lines 433-436)
    const u64 masked = f.s.alloc(scores);
    f.s.free(biased);
    biased = masked;
  }
  const u64 probs = f.s.alloc(scores);
  f.s.free(biased);
  f.keep(probs);
  const u64 context = f.s.alloc(f.bytes(c, f.act));
  const u64 merged = f.s.alloc(f.bytes(c, f.act));  // permute(0, 2, 1, 3).contiguous()
  f.s.free(context);
  f.drop(probs), f.drop(qn), f.drop(kn);
  return merged;
}

u64 window_attention(Forward& f, const SwinStage& st, u64 windows) {
  const u64 c = st.width;
  const u64 q = linear(f, windows, c, c, f.amp, "q_proj"), k = linear(f, windows, c, c, f.amp, "k_proj");
  const u64 v = linear(f, windows, c, c, f.amp, "v_proj");
  const u64 area = mul(st.window, st.window), per_window = mul(area, area);
  const u64 windows_total = mul(f.batch, mul(st.padded / st.window, st.padded / st.window));
  if (f.r.m.enc.cosine_attention) {
    const u64 merged = cosine_attention(f, st, q, k, v, windows_total, per_window);
    f.keep(merged);  // o_proj saves its input
    const u64 o = linear(f, merged, c, c, false, "o_proj");
    f.drop(merged), f.drop(q), f.drop(k), f.drop(v);
    return o;
  }
  u64 expanded = 0, combined = 0, cast = 0, aligned = 0;
  if (st.shift) {
    expanded = f.s.alloc(mul(mul(windows_total, per_window), f.wide));
    combined = f.s.alloc(mul(mul(mul(windows_total, per_window), st.heads), f.wide));
    if (f.amp) cast = f.s.alloc(mul(mul(mul(windows_total, per_window), st.heads), 2));
    if (f.train) {
      aligned = f.s.alloc(mul(mul(mul(windows_total, area), mul((area + 7) / 8 * 8, st.heads)), f.act));
      f.keep(aligned);
    }
  }
  for (u64 id : {q, k, v}) f.keep(id);
  const u64 lse = f.train ? f.s.alloc(mul(mul(windows_total, st.heads), (area + 31) / 32 * 32 * 4)) : 0;
  f.keep(lse);
  const u64 out = f.s.alloc(f.bytes(c, f.act));
  f.keep(out);
  const u64 o = linear(f, out, c, c, false, "o_proj");
  f.drop(out), f.s.free(cast), f.s.free(expanded), f.drop(q), f.drop(k), f.drop(v), f.s.free(combined);
  if (aligned != 0) f.drop(aligned);
  return o;
}

// A stage returns: its reshaped hidden states (`reshaped` bytes) made, its last block's output `x`
// (when merged), the stage's input (held by SwinEncoder) and the previous stage's reshaped states freed.
void end_stage(Forward& f, u64 reshaped, u64 x) {
  const u64 next = f.s.alloc(reshaped);
  f.drop(x);
  if (f.stack_input != 0) f.s.free(f.stack_input), f.stack_input = 0;
  f.s.free(f.stage_reshaped);
  f.stage_reshaped = next;
}

// torch.roll over both spatial dims: one dim at a time (the first roll's output a temporary).
u64 roll(Forward& f, u64 bytes) {
  const u64 first = f.s.alloc(bytes), out = f.s.alloc(bytes);
  f.s.free(first);
  return out;
}

// SwinPatchMerging after a stage's last block: the four strided slices concatenated (4 x width at a
// quarter of the tokens: the input's bytes), its LayerNorm, the reduction to 2 x width. Then the
// stage's reshaped hidden states (permute(0, 3, 1, 2).contiguous(), made for every stage and held
// until the next stage returns). Returns the next stage's input.
u64 patch_merging(Forward& f, const SwinStage& st, u64 x) {
  const u64 side = (st.side + 1) / 2;
  f.q_len = mul(side, side);
  const u64 cat = f.s.alloc(f.bytes(4 * st.width, f.wide));
  u64 reduced = 0;
  if (f.r.m.enc.cosine_attention) {  // Swinv2PatchMerging: the reduction first, then the norm over 2 x width
    f.keep(cat);
    const u64 r = linear(f, cat, 4 * st.width, 2 * st.width, f.amp, "downsample.reduction");
    f.drop(cat);
    reduced = norm(f, r, 2 * st.width, f.wide);
    f.drop(r);
  } else {
    const u64 n = norm(f, cat, 4 * st.width, f.wide);
    f.drop(cat);
    reduced = linear(f, n, 4 * st.width, 2 * st.width, f.amp, "downsample.reduction");
    f.drop(n);
  }
  end_stage(f, f.bytes(2 * st.width, f.act), x);
  if (!f.train) f.stack_input = reduced;  // SwinEncoder's hidden_states holds it until the next stage returns
  return reduced;
}

}  // namespace

u64 swin_layer(Forward& f, LayerKind kind, u64 x) {
  const SwinStage st = stage_of(f, kind);
  const u64 c = st.width, pad_tokens = mul(f.batch, mul(st.padded, st.padded));
  f.q_len = mul(st.side, st.side), f.kv_len = mul(st.window, st.window);
  const u64 n = norm(f, x, c, f.wide);
  const u64 padded = f.s.alloc(mul(pad_tokens, mul(c, f.wide)));  // F.pad (a copy even when nothing is padded)
  f.drop(n);
  const u64 nw = f.s.bytes_of(padded);
  const u64 shifted = st.shift ? roll(f, nw) : 0;
  const u64 windows = f.s.alloc(nw);  // window_partition's contiguous copy
  if (shifted != 0) f.s.free(shifted);
  const u64 q_len = f.q_len;
  f.q_len = mul(st.padded, st.padded);
  const u64 o = window_attention(f, st, windows);
  const u64 reversed = f.s.alloc(f.bytes(c, f.act));  // window_reverse's contiguous copy
  const u64 unshifted = st.shift ? roll(f, f.bytes(c, f.act)) : reversed;
  if (unshifted != reversed) f.s.free(reversed);
  f.q_len = q_len;
  const u64 cropped = st.padded != st.side ? f.s.alloc(f.bytes(c, f.act)) : unshifted;
  const u64 sum = f.s.alloc(f.bytes(c, f.wide));
  f.s.free(padded);
  const u64 after = norm(f, sum, c, f.wide);
  const u64 fc1 = linear(f, after, c, 4 * c, f.amp, "fc1"), act = f.s.alloc(f.bytes(4 * c, f.act));
  f.keep(fc1);  // gelu saves its input
  f.drop(fc1);
  const u64 fc2 = linear(f, act, 4 * c, c, false, "fc2");
  f.drop(act), f.drop(after);
  const u64 out = f.s.alloc(f.bytes(c, f.wide));
  f.drop(fc2);
  for (u64 id : {windows, o, unshifted, cropped, sum}) f.drop(id);
  if (kind.stage_end && kind.stage + 1U < f.r.m.enc.stage_depths.size()) return patch_merging(f, st, out);
  if (kind.stage_end) {  // the last stage: SwinEncoder returns, its reshaped states with it
    end_stage(f, f.bytes(c, f.act), 0);
    f.s.free(f.stage_reshaped), f.stage_reshaped = 0;
    f.hidden = c;
  }
  return out;
}

}  // namespace vramdoc::estimator::detail
