// The estimator's only measured constants (everything else is derived from the model's tensors).
// Where each comes from: docs/estimator.md, "Fitted constants".
#pragma once
#include <cstdint>

#include "core/units.hpp"

namespace vramdoc::estimator {

// cuBLAS + cuBLASLt workspaces PyTorch allocates on the first fp32 and bf16 matmuls
// (calibration env line: warm_allocated = 64 MiB). Measured, not fitted.
constexpr std::uint64_t kCublasWorkspaceBytes = 64 * MiB;

// CUDA context, kernel images and library handles beyond PyTorch's reserved memory
// (driver_process_used - peak_reserved: 742-776 MiB over 46 cases; the median).
constexpr std::uint64_t kCudaContextBytes = 766 * MiB;

// Caching allocator: peak reserved / (peak allocated + modelled cached segments), median over the
// 46 calibration cases: fragmentation and caching the phase model does not follow block by block.
constexpr std::uint64_t kReservedPerMille = 1109;

// NCCL (several GPUs only; nccl.cpp), measured on NCCL-only processes on two H200s over NVLink
// (NCCL 2.28.9, docs/results/multi-gpu-h200-2026-11-30/nccl-*): the driver's number after each
// stage. A second communicator costs 486 MiB at NCCL_BUFFSIZE 4 MiB and 582 MiB at 8 MiB: 24
// buffers of NCCL_BUFFSIZE plus 390 MiB; the first costs 354 MiB more (NCCL's per-process part),
// and all-gather / reduce-scatter / broadcast after the first all-reduce 4 MiB more.
constexpr std::uint64_t kNcclProcessBytes = 358 * MiB;
constexpr std::uint64_t kNcclCommunicatorBytes = 390 * MiB;
constexpr std::uint64_t kNcclBuffersPerCommunicator = 24;

// Bytes of cudaMalloc'd segment a fresh request of `bytes` creates (CUDACachingAllocator's
// get_allocation_size): up to 1 MiB a 2 MiB small-pool segment, below 10 MiB a 20 MiB one,
// larger requests their own size rounded up to 2 MiB.
inline std::uint64_t segment_bytes(std::uint64_t bytes) {
  if (bytes <= 1 * MiB) return 2 * MiB;
  if (bytes < 10 * MiB) return 20 * MiB;
  const std::uint64_t round = 2 * MiB;
  return saturating_mul(saturating_add(bytes, round - 1) / round, round);
}

// Reserved bytes for `allocated` live bytes plus `cached` bytes of free segments kept from earlier
// phases: the fitted ratio, in whole 2 MiB segments.
inline std::uint64_t reserved_for(std::uint64_t allocated, std::uint64_t cached) {
  allocated = saturating_add(allocated, cached);
  const std::uint64_t scaled = saturating_mul(allocated / 1000, kReservedPerMille);
  const std::uint64_t segment = 2 * MiB;
  return saturating_mul((saturating_add(scaled, segment - 1)) / segment, segment);
}

}  // namespace vramdoc::estimator
