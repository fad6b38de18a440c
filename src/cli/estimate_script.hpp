// `vramdoc estimate [options] -- python train.py ARGS`: the job captured on the CPU with CUDA faked
// (backends/capture_job.*), replayed and reported by core/capture (docs/estimator.md, "Estimating
// a script"); --from-trace replays a trace the capture wrote.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vramdoc::cli {

struct ScriptOptions {
  std::vector<std::string> command;  // after --
  std::string from_trace;            // a capture's trace file instead of a command
  std::string save_trace;            // keep the (last) capture's trace here
  std::string gpu, gpu_memory;       // the card (default: the local GPU 0, else an H200 without a verdict)
  std::string batch, seq;            // values for {batch} / {seq} in the command
  bool max_batch = false, max_seq = false;
  std::uint64_t steps = 3;
  std::uint64_t timeout_s = 600;
  bool json = false, show_output = false, expandable_segments = false;
};

int estimate_script(const ScriptOptions& options);

}  // namespace vramdoc::cli
