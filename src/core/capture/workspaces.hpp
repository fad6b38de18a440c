// What a job's CUDA kernels allocate through PyTorch's allocator that no tensor shows: the cuBLAS
// workspace of each (thread, stream) (aten/src/ATen/cuda/CublasHandlePool.cpp: one per handle and
// stream, from the first matmul on; autograd's thread has its own handle) and cuDNN's per-call
// convolution workspace. The trace's `k OP STREAM THREAD INFO` lines say where such kernels ran.
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

// Which libraries the job's kernels used (they set the driver's overhead beyond reserved memory).
struct Libraries {
  bool cublas = false, cudnn = false, trains = false, fused_attention_16bit = false;
};

// A synthetic allocation (freed = false: lives to the end) or its free, placed after `after`
// (an index into the trace's events).
struct Insert {
  std::size_t after = 0;
  bool alloc = true;
  std::uint64_t bytes = 0;
  std::uint64_t id = 0;     // in the range kWorkspaceIds, apart from the trace's own ids
  std::uint32_t stream = 0;
  std::string_view what;    // "cuBLAS workspace", "cuDNN workspace"
};
constexpr std::uint64_t kWorkspaceIds = std::uint64_t{1} << 62;

// The workspaces of `trace` on `target`, in event order, and the libraries it used.
std::vector<Insert> workspaces(const Trace& trace, const Target& target, Libraries& used);

}  // namespace vramdoc::capture
