// The estimator's only measured constants (everything else is derived from the model's tensors).
// Where each comes from: docs/estimator.md, "Fitted constants".
#pragma once
#include <cstdint>

#include "core/units.hpp"

namespace vramdoc::estimator {

// cuBLAS workspaces PyTorch allocates through its allocator, counted in peak allocated (calibration
// env line: warm_allocated = 64 MiB). Measured, not fitted.
constexpr std::uint64_t kCublasWorkspaceBytes = 64 * MiB;
// Inference makes one (every fresh-process inference trace holds a single 32 MiB block).
constexpr std::uint64_t kCublasInferenceWorkspaceBytes = 32 * MiB;

// What the driver charges a process beyond PyTorch's reserved memory (driver_process_used -
// reserved, fresh process per case, H200, driver 580, CUDA 13, PyTorch 2.11; docs/estimator.md):
// the bare CUDA context (NVML right after context creation: 518 MiB in every case), plus the
// libraries' device memory and the kernel images loaded lazily as the run first uses them.
constexpr std::uint64_t kCudaContextBytes = 518 * MiB;
constexpr std::uint64_t kInferenceLibraryBytes = 168 * MiB;  // cuBLAS handles, forward kernels (median 686 - 518)
constexpr std::uint64_t kTrainingLibraryBytes = 224 * MiB;   // + backward and optimizer kernels (median 742 - 518)
constexpr std::uint64_t kFusedAttentionBackwardBytes = 16 * MiB;  // 16-bit SDPA flash backward kernels (758 - 742)

// The process overhead beyond reserved memory for a run.
inline std::uint64_t process_overhead_bytes(bool trains, bool fused_16bit_attention) {
  if (!trains) return kCudaContextBytes + kInferenceLibraryBytes;
  return kCudaContextBytes + kTrainingLibraryBytes + (fused_16bit_attention ? kFusedAttentionBackwardBytes : 0);
}

// NCCL (several GPUs only; nccl.cpp), measured on NCCL-only processes on two H200s over NVLink
// (NCCL 2.28.9, docs/results/multi-gpu-first-cases-2xh200-2026-11-30/raw.tar.xz (nccl-*)): the driver's number after each
// stage. A second communicator costs 486 MiB at NCCL_BUFFSIZE 4 MiB and 582 MiB at 8 MiB: 24
// buffers of NCCL_BUFFSIZE plus 390 MiB; the first costs 354 MiB more (NCCL's per-process part),
// and all-gather / reduce-scatter / broadcast after the first all-reduce 4 MiB more.
constexpr std::uint64_t kNcclProcessBytes = 358 * MiB;
constexpr std::uint64_t kNcclCommunicatorBytes = 390 * MiB;
constexpr std::uint64_t kNcclBuffersPerCommunicator = 24;

// Sharded runs only (not replayed): peak reserved / peak allocated, median over the 46 single-GPU
// calibration cases.
constexpr std::uint64_t kReservedPerMille = 1109;

// Reserved bytes for `allocated` live bytes plus `cached` bytes of free segments: the fitted ratio,
// in whole 2 MiB segments.
inline std::uint64_t reserved_for(std::uint64_t allocated, std::uint64_t cached) {
  allocated = saturating_add(allocated, cached);
  const std::uint64_t scaled = saturating_mul(allocated / 1000, kReservedPerMille);
  const std::uint64_t segment = 2 * MiB;
  return saturating_mul((saturating_add(scaled, segment - 1)) / segment, segment);
}

}  // namespace vramdoc::estimator
