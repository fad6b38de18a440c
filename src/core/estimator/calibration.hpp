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

// Caching allocator: peak reserved / peak allocated, median over the 46 calibration cases
// (range 1.01-1.26): blocks cached between phases and 2 MiB segment rounding.
constexpr std::uint64_t kReservedPerMille = 1111;

// Reserved bytes for a peak of `allocated` bytes: the fitted ratio, in whole 2 MiB segments.
inline std::uint64_t reserved_for(std::uint64_t allocated) {
  const std::uint64_t scaled = saturating_mul(allocated / 1000, kReservedPerMille);
  const std::uint64_t segment = 2 * MiB;
  return saturating_mul((saturating_add(scaled, segment - 1)) / segment, segment);
}

}  // namespace vramdoc::estimator
