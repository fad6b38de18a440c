// NCCL's device memory per rank, outside PyTorch's caching allocator: the driver charges it to
// the process (nvidia-smi), torch.cuda.memory_reserved() never sees it. The constants are the
// measured footprint of NCCL-only processes on two H200s (docs/estimator.md, "NCCL").
#pragma once
#include <cstdint>

namespace vramdoc::estimator {

// Bytes NCCL adds to one rank's process for `peers` communicators with other ranks, whose
// Simple-protocol buffers are `buffsize` bytes (NCCL_BUFFSIZE), and `single` one-rank
// communicators (no connections: only the fixed part); none: 0 (a single-GPU job).
std::uint64_t nccl_device_bytes(std::uint64_t peers, std::uint64_t single, std::uint64_t buffsize);

}  // namespace vramdoc::estimator
