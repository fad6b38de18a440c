// A framework that takes a pool of GPU memory at start (JAX/XLA: 75 % of the card by default;
// TensorFlow: nearly all of it; vLLM: its KV cache) shows the driver a flat line whatever happens
// inside the pool: a leak or the job's real peak stay hidden. docs/run-analyze.md, "Preallocation".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

struct Preallocation {
  std::string framework;       // "JAX/XLA", "TensorFlow", "vLLM", or "" when only the pattern shows it
  double fraction = 0;         // the pool's share of the card's capacity
  double at_seconds = 0;       // when it was taken
  std::uint64_t pool_bytes = 0;
};

// The environment variables `run` copies into the timeline's header ("env") when the job has them:
// the allocator settings of JAX/XLA, TensorFlow and PyTorch that change what the driver sees.
const std::vector<std::string>& allocator_settings();

// The framework named by the command or the allocator settings ("JAX/XLA", "TensorFlow", "vLLM"),
// or "" when none is. Opted out of preallocation (XLA_PYTHON_CLIENT_PREALLOCATE=false,
// XLA_PYTHON_CLIENT_ALLOCATOR=platform, TF_FORCE_GPU_ALLOW_GROWTH=true): sets `opted_out`.
std::string preallocating_framework(const Timeline& tl, bool& opted_out);

// Whether the job's framework (JAX/XLA, TensorFlow) allocates from its own pool that grows in
// regions of doubling size (the BFC allocator): the driver then shows how the pool grew, not what
// the job keeps. False with XLA_PYTHON_CLIENT_ALLOCATOR=platform (every buffer its own allocation).
bool grows_a_framework_pool(const Timeline& tl);

// A jump to 40 % of `capacity_bytes` or more (from under 10 %, within a quarter second) after
// which the driver's number never grows by more than `tolerance_bytes` (or 2 % of the card): a
// pool. Reported when a framework is named, or when the pool is JAX's default share (75 % +- 2.5 %)
// or 90 % of the card and more; never when the job opted out.
std::optional<Preallocation> find_preallocation(const Timeline& tl, std::uint64_t capacity_bytes, double tolerance_bytes);

// What preallocation hides and how to see through it, for the framework (one sentence each).
std::string preallocation_hides(const Preallocation& p);
std::string preallocation_see_through(const Preallocation& p);

}  // namespace vramdoc::timeline
