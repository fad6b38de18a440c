// A forward op by op (see forward_ops.hpp) for the text encoders that mix tokens without dense attention: FNet
// (modeling_fnet.py, transformers 5.17) and Nystromformer's landmark attention (modeling_nystromformer.py).
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// softmax(scores + mask) over f.q_len x f.kv_len in the scores' dtype, no dropout: the matmul's output, the masked
// sum, the probabilities (saved).
u64 masked_softmax(Forward& f, u64 heads) {
  const u64 raw = f.s.alloc(f.scores(heads, f.act)), masked = f.s.alloc(f.scores(heads, f.act));
  f.s.free(raw);
  const u64 probs = f.s.alloc(f.scores(heads, f.act));
  f.keep(probs);
  f.s.free(masked);
  return probs;
}

}  // namespace

// NystromformerSelfAttention.forward: query and key each / sqrt(sqrt(head_dim)) (new tensors, saved by the matmuls).
// num_landmarks == segment_means_seq_len: dense scores, + the extended mask, softmax in the scores' dtype (saved; the
// module's dropout is never applied), @ value. Otherwise landmarks: q and k reshaped (copies) and averaged over
// segments into num_landmarks rows; kernel_1 = softmax(q @ k_landmarks^T) (seq x landmarks, saved), kernel_2 (landmarks
// x landmarks) through iterative_inv's six rounds of small matmuls, kernel_3 = softmax(q_landmarks @ k^T + mask)
// (landmarks x seq, saved), kernel_1 @ inv (seq x landmarks, saved by the next matmul), kernel_3 @ value, their
// product. With conv_kernel_size, context += conv(value) (a depthwise Conv2d over the sequence: value's contiguous
// copy for cuDNN, its output added in place; the value view saved). The heads merged (permute().contiguous()).
u64 nystrom_attention(Forward& f, const LayerDims& d, u64 v) {
  const ModelConfig& m = f.r.m;
  const u64 seq = f.q_len, kv = f.kv_len, w = f.act;
  const u64 qs = f.s.alloc(f.bytes(d.q, w)), ks = f.s.alloc(f.bytes(d.kv, w));
  f.keep(qs), f.keep(ks), f.keep(v);
  std::vector<u64> probs;
  if (m.enc.landmarks == m.enc.segment_means || m.enc.landmarks == 0) {
    probs.push_back(masked_softmax(f, d.heads));
  } else {
    const u64 lm = std::min(m.enc.landmarks, seq), small = mul(mul(f.batch, lm), mul(d.q, w));
    for (int i = 0; i < 2; ++i) {  // q, then k: the reshape's copy, its segment means
      const u64 copy = f.s.alloc(f.bytes(d.q, w)), means = f.s.alloc(small);
      f.s.free(copy), probs.push_back(means), f.keep(means);
    }
    f.kv_len = lm;
    probs.push_back(masked_softmax(f, d.heads));  // kernel_1 (its mask-free matmul as one more score-sized tensor)
    f.q_len = lm, f.kv_len = kv;
    probs.push_back(masked_softmax(f, d.heads));  // kernel_3
    f.q_len = seq, f.kv_len = lm;
    const u64 product = f.s.alloc(f.scores(d.heads, w));  // kernel_1 @ iterative_inv(kernel_2)
    f.keep(product), probs.push_back(product);
    f.kv_len = kv;
  }
  const u64 context = f.s.alloc(f.bytes(d.q, w));
  if (m.enc.landmark_conv > 0) {
    const u64 copy = f.s.alloc(f.bytes(d.kv, w)), conv = f.s.alloc(f.bytes(d.q, w));
    f.s.free(copy), f.s.free(conv);
  }
  const u64 out = f.s.alloc(f.bytes(d.q, w));
  f.s.free(context);
  f.drop(probs), f.drop(qs), f.drop(ks);
  return out;
}

// FNetLayer.forward: FNetBasicFourierTransform's torch.fft.fftn(hidden, dim=(1, 2)) (fft_fftn promotes the real input
// to complex: a copy of twice its width, freed when fftn returns; _fft_c2c's complex output), its .real (a view: the
// complex output stays referenced by FNetFourierTransform's self_outputs until it returns), FNetBasicOutput's
// LayerNorm(input + real) (the sum saved); nothing of the transform is saved for the backward (to / _fft_c2c / real
// save no tensor), whose gradient goes back through a complex copy of the real gradient and the inverse transform (two
// complex tensors at once: Forward::backward_transient). Then FNetIntermediate and FNetOutput as BERT's (dense,
// act, dense, dropout, LayerNorm of the sum). Under autocast fft_fftn runs in fp32 (complex64).
u64 fourier_layer(Forward& f, LayerKind kind, [[maybe_unused]] u64 x) {  // x: the caller's (it frees the layer's input)
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, complex_width = 2 * (f.amp ? 4 : f.wide);
  const u64 promoted = f.s.alloc(f.bytes(h, complex_width)), spectrum = f.s.alloc(f.bytes(h, complex_width));
  f.s.free(promoted);
  const u64 sum = f.s.alloc(f.bytes(h, std::max<u64>(f.wide, complex_width / 2)));
  u64 n1 = norm(f, sum, h, f.wide);
  f.backward_transient(f.bytes(h, complex_width));  // the gradient's complex copy and its inverse transform
  f.drop(sum);
  f.s.free(spectrum);  // self_outputs goes when FNetFourierTransform.forward returns
  return post_norm_ffn(f, kind, n1);
}

u64 post_norm_ffn(Forward& f, LayerKind kind, u64 a) {
  const u64 h = f.r.m.hidden_size;
  u64 mo = mlp(f, kind, a, f.amp);
  mo = dropout(f, mo, h, f.act, f.r.m.residual_dropout);
  const u64 sum = f.s.alloc(f.bytes(h, f.wide));
  f.drop(mo), f.drop(a);
  const u64 out = norm(f, sum, h, f.wide);
  f.drop(sum);
  return out;
}

}  // namespace vramdoc::estimator::detail
