// What a job's CUDA kernels allocate through PyTorch's allocator that no tensor shows
// (docs/estimator.md, "The replay"): the cuBLAS workspace of each (thread, stream)
// (aten/src/ATen/cuda/CublasHandlePool.cpp: one per handle and stream, from the first matmul on;
// autograd's thread has its own handle, so a training job holds two), cuBLASLt's of each (thread,
// stream) that ran an addmm with a bias (the Lt epilogue path of Blas.cpp), and the temporaries of
// one call: cuDNN's convolution workspace (conv_workspace.hpp) and cuDNN attention's backward
// workspace. The trace's `k OP STREAM THREAD INFO` lines say where such kernels ran.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/capture/trace.hpp"

namespace vramdoc::capture {

// The card the job runs on, as far as its libraries' memory goes.
struct Target {
  int cc_major = 9, cc_minor = 0;  // compute capability
  unsigned sm_count = 132, max_threads_per_sm = 2048;  // a reduction's launch (the H200's; other cards: a known limit)
};

// parseChosenWorkspaceSize: 32 MiB on compute capability 9.x to 12.x (Hopper, Blackwell), else
// CUBLAS_WORKSPACE_CONFIG's default :4096:2:16:8 (2 x 4 MiB + 8 x 16 KiB).
std::uint64_t cublas_workspace_bytes(const Target& target);
// getCUDABlasLtWorkspaceSize: CUBLASLT_WORKSPACE_SIZE's default, 1 MiB (the H200 traces: one 1 MiB
// block at the first addmm with a bias of each thread).
std::uint64_t cublaslt_workspace_bytes();
// cuDNN's attention backward (MHA.cpp run_cudnn_SDP_bprop): an fp32 accumulator for dQ and one fp32
// value per query row, B x H x S_q x (D + 1) x 4 bytes (the H200 traces, BERT and ViT: to the byte).
std::uint64_t cudnn_attention_backward_bytes(const std::vector<std::uint64_t>& query_shape);
// Softmax's CUDA backward (SoftMax.cu softmax_backward_cuda_out) first computes tmp = grad * output,
// a temporary of grad's size, after its output and freed before it returns (the H200 traces: Swin's
// window attention, the math path's B x H x S x S blocks).
std::uint64_t softmax_backward_bytes(std::string_view dtype, const std::vector<std::uint64_t>& grad_shape);
// _safe_softmax (attention.cpp, the math path's softmax) compares its input with -inf: a bool mask of
// the input's elements, after the output and freed before it returns (the H200 traces, fp32 Llama).
std::uint64_t safe_softmax_mask_bytes(const std::vector<std::uint64_t>& shape);

// Which libraries the job's kernels used (they set the driver's overhead beyond reserved memory).
struct Libraries {
  bool cublas = false, cudnn = false, trains = false, fused_attention_16bit = false;
  unsigned cublas_handles = 0;  // threads that ran a cuBLAS call (one handle each: the job's, autograd's)
};

// A synthetic allocation or its free, placed after `after` (an index into the trace's events).
struct Insert {
  std::size_t after = 0;
  bool alloc = true;
  std::uint64_t bytes = 0;
  std::uint64_t id = 0;     // in the range kWorkspaceIds, apart from the trace's own ids
  std::uint32_t stream = 0;
  std::string_view what;    // "cuBLAS workspace", "cuDNN convolution workspace", ...
};
constexpr std::uint64_t kWorkspaceIds = std::uint64_t{1} << 62;

// The workspaces of `trace` on `target`, in event order, and the libraries it used.
std::vector<Insert> workspaces(const Trace& trace, const Target& target, Libraries& used);

}  // namespace vramdoc::capture
