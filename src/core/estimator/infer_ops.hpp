// Inference under no_grad, op by op: every tensor transformers' modeling code and PyTorch's kernels
// allocate in a forward (outputs and temporaries), freed when the Python name holding it goes out of
// scope, as the allocator traces of docs/results/h200-2026-11-30-h16/ show them. Shared by
// infer_layer.cpp (norms, RoPE, attention), infer_mlp.cpp (MLPs, experts, latent attention) and
// infer_sequence.cpp (the model: embeddings, layers, logits, generate()'s decoding steps).
#pragma once
#include <array>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/sequence.hpp"

namespace vramdoc::estimator::detail {

// One forward: the prefill (q_len = seq) or a decoding step (q_len = 1), with the widths its
// tensors have and the masks it built.
struct Forward {
  Sequence& s;
  const Run& r;
  u64 batch = 1, q_len = 1, kv_len = 1;  // sequences; new tokens of each; keys each attends to
  u64 act = 2;                           // matmul outputs (16-bit under autocast or in a 16-bit model)
  u64 wide = 2;                          // the residual stream (fp32 in fp32 and under autocast)
  bool amp = false, quantized = false;   // autocast; the layers' Linears dequantise their weights per call
  u64 sliding_bool_mask = 0;             // SDPA with a window shorter than the prompt: the explicit bool mask
  u64 tokens() const { return saturating_mul(batch, q_len); }
  // Bytes of a tensor of `elements` per token at `width` bytes each.
  u64 bytes(u64 elements, u64 width) const { return saturating_mul(saturating_mul(tokens(), elements), width); }
  // Bytes of a batch x heads x q_len x kv_len matrix at `width`.
  u64 scores(u64 heads, u64 width) const {
    return saturating_mul(saturating_mul(saturating_mul(batch, heads), saturating_mul(q_len, kv_len)), width);
  }
};

// A layer's widths on one tensor-parallel rank (heads and MLP channels divided by --tp).
struct LayerDims {
  u64 h, heads, kv_heads, head_dim, q, kv, inter, rotary;
};
LayerDims layer_dims(const Run& r);

// The layer's KV cache entries (keys, values; DeepSeek: the latent and the rotary key).
using CacheIds = std::array<u64, 2>;

// A Linear reading `in_elements` per token (cast to 16 bit first under autocast when the input is
// fp32; a quantised weight dequantised for the call): returns its output.
u64 linear(Forward& f, u64 in_elements, u64 out_elements, bool input_wide, bool quantizable = true);
// A norm over `elements` per token of an input `in_width` wide: returns its output.
u64 norm(Forward& f, u64 elements, u64 in_width);
// Attention of a decoder layer reading `input`: projections, RoPE, the cache update, the kernel and
// the output projection; returns o_proj's output. `held` receives tensors the layer keeps to its
// end (eager attention's probabilities, returned as attn_weights).
u64 attention(Forward& f, LayerKind kind, bool input_wide, CacheIds& cache, u64& held);
// DeepSeek's multi-head latent attention (the cache keeps the compressed latent).
u64 latent_attention(Forward& f, CacheIds& cache);
// The MLP (dense or mixture of experts) of a layer reading a `input_wide` input: returns its output.
u64 mlp(Forward& f, LayerKind kind, bool input_wide);
// One decoding step's work for a layer that allocates more than a few MiB: the cache grows by the
// new token (a sliding-window layer keeps its window), DeepSeek decompresses its whole latent
// cache, routed experts gather their weights per token.
void decode_layer(Forward& f, LayerKind kind, CacheIds& cache);

// The weights, tensor by tensor (embeddings, layers, head), as loaded.
void allocate_weights(Sequence& s, const Run& r);
// Inference: the weights, the prefill op by op, generate()'s decoding steps (--new-tokens).
void inference_events(Sequence& s, const Run& r);

}  // namespace vramdoc::estimator::detail
