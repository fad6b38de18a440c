// A capture's trace replayed through the caching-allocator model (core/estimator/allocator.*), one
// allocator per CUDA stream as PyTorch keys its free blocks, with the library workspaces the
// trace's `k` lines call for (workspaces.cpp): peak allocated and reserved, each phase's peaks and
// the Python lines holding the memory at the peak.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/capture/trace.hpp"
#include "core/capture/workspaces.hpp"
#include "core/estimator/allocator.hpp"

namespace vramdoc::capture {

struct ReplayOptions {
  Target target;                             // the card the workspaces are sized for
  estimator::AllocatorSettings allocator;    // PYTORCH_CUDA_ALLOC_CONF
};

struct PhasePeak {
  std::string name;
  std::uint64_t peak_allocated_bytes = 0, peak_reserved_bytes = 0;
  std::uint64_t allocated_end_bytes = 0;  // torch.cuda.memory_allocated() after its last event
};

// Bytes alive at the peak, by where they were allocated (the innermost frames outside torch).
struct HeldBy {
  std::string where;  // "modeling_bert.py:260:forward<train.py:31:<module>", or a workspace's name
  std::uint64_t bytes = 0;
  std::uint64_t blocks = 0;
};

struct Replay {
  std::uint64_t peak_allocated_bytes = 0;  // torch.cuda.max_memory_allocated()
  std::uint64_t peak_reserved_bytes = 0;   // torch.cuda.max_memory_reserved()
  std::string peak_phase;                  // where peak allocated is reached
  std::vector<PhasePeak> phases;           // in the trace's order
  std::vector<HeldBy> held_at_peak;        // largest first
  std::uint64_t workspace_bytes_at_peak = 0;
  Libraries libraries;                     // what the job's kernels used (the process overhead)
  std::uint64_t allocations = 0;
};

Replay replay_trace(const Trace& trace, const ReplayOptions& options);

}  // namespace vramdoc::capture
