// Synthetic GPU-memory timelines of a training loop, for the classifier tests. The model follows
// what the real recordings (shared/data/timelines, tests/data/timelines) show of PyTorch's caching
// allocator: the driver's number is the allocator's reserved memory, a staircase that grows only
// when live tensors no longer fit the cache; marks carry the bytes still allocated at step ends.
#pragma once
#include <cstdint>
#include <random>
#include <string>

#include "core/timeline/timeline.hpp"

namespace vramdoc::test {

enum class Kind { Stable, Plateau, Leak, LeakToOom, Insufficient, BatchRamp, Fragmentation };

struct SynthParams {
  Kind kind = Kind::Stable;
  unsigned seed = 1;
  int steps = 150;
  double leak_mib_per_step = 8;  // Leak, LeakToOom
  double noise_mib = 0.5;        // standard deviation of jitter added to the driver's number
};

// One timeline: samples every 20 ms (t, process_used, device_used, allocated), "step N" marks
// with the allocated bytes, the outcome and an OOM message of PyTorch's form where it runs out.
timeline::Timeline synthesize(const SynthParams& p);

// What `run` sees from outside: only t and process_used, no marks; outcome and message kept.
timeline::Timeline reduce(const timeline::Timeline& tl);

}  // namespace vramdoc::test
