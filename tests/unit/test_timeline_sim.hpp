// A small caching-allocator simulator for the classifier's stability tests (issue 15): a job is a
// list of steps (duration, bytes live at the step's peak and at its end); the allocator's pool
// grows to cover each peak and never shrinks (or is taken whole at start, as JAX does); the driver
// sees context + pool. A recording samples that every 20 ms from a random phase, with jitter in the
// step times and noise in the readings: two recordings of one job differ only in those.
#pragma once
#include <optional>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::test {

struct SimStep {
  double seconds = 0.1;
  double peak_bytes = 0;  // live at the step's peak (forward done)
  double end_bytes = 0;   // still live at its end (what is kept)
};

struct SimJob {
  double context_bytes = 500.0 * 1048576;
  double load_seconds = 2;       // before the first step: the model loads
  double load_bytes = 4.0 * 1073741824;  // live after loading (weights, optimizer state)
  double capacity_bytes = 140.0 * 1073741824;
  double segment_bytes = 2.0 * 1048576;  // the pool grows in these
  std::optional<double> pool_bytes;      // a pool of this size taken at load (preallocation)
  std::vector<SimStep> steps;
  std::vector<std::string> command;
};

struct SimRecording {
  unsigned seed = 1;
  double interval = 0.02;
  double noise_bytes = 0.5 * 1048576;
  double step_jitter = 0.08;  // relative standard deviation of each step's duration
  bool marks = true;          // "step N" marks with the allocated bytes at step ends
};

// One recording of `job`: samples (t, process_used), marks, and when the pool would pass the
// capacity an OOM (PyTorch's message, the oom mark) and the end.
timeline::Timeline record(const SimJob& job, const SimRecording& rec);

// Jobs of issue 15: every `every` steps an evaluation keeps `kept` bytes (its outputs and their graph).
SimJob periodic_eval_leak(int steps, int every, double act_bytes, double kept_bytes, double step_seconds);
// Random input lengths: each step's activations are a random share (0.1 .. 1) of `act_bytes`.
SimJob random_shapes(int steps, double act_bytes, double step_seconds, unsigned job_seed);
// A stable loop with an evaluation at `eval_act` bytes every `every` steps (not kept).
SimJob eval_spike(int steps, int every, double act_bytes, double eval_act_bytes, double step_seconds);
// A loop keeping `leak` bytes per step, with a pool of `pool_share` of the card taken at start (JAX).
SimJob preallocated_leak(int steps, double leak_bytes, double pool_share, double step_seconds);

}  // namespace vramdoc::test
