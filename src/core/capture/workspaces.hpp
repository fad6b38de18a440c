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
