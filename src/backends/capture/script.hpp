// `vramdoc estimate [options] -- python train.py ARGS`: the card the capture fakes, the job
// captured on the CPU with CUDA faked (job.hpp), replayed and reported by core/capture
// (docs/estimator.md, "Estimating a script"), and the --max-batch / --max-seq search over {batch}
// / {seq}; --from-trace replays a trace the capture wrote. The CLI prints what comes back.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/capture/report.hpp"
#include "core/result.hpp"

namespace vramdoc::backends {

struct ScriptOptions {
  std::vector<std::string> command;  // after --
  std::string from_trace;            // a capture's trace file instead of a command
  std::string save_trace;            // keep the (last) capture's trace here
  std::string gpu;                   // --gpu (default: the local GPU 0, else an H200 without a verdict)
  std::optional<std::uint64_t> gpu_memory_bytes;  // --gpu-memory
  std::optional<std::uint64_t> value;             // --batch / --seq: the value for {batch} / {seq}
  bool max_batch = false, max_seq = false;
  std::uint64_t steps = 3;
  std::uint64_t timeout_s = 600;
  bool json = false, show_output = false, expandable_segments = false;
  std::function<void(const std::string&)> note;  // a line for the user, said at once (stderr)
};

// What estimate answers about a script.
enum class ScriptVerdict {
  Fits,        // a card was given (or found) and the job fits it; with a search, a value fits
  DoesNotFit,  // the answer is no (exit 1)
  NoCard,      // no card to judge against: the numbers alone
  Partial,     // the job failed or timed out before a step: what it reached (exit 2)
};

struct ScriptAnswer {
  capture::Report report;
  ScriptVerdict verdict = ScriptVerdict::NoCard;
};

// Captures (or replays) and reports; the error is for bad options, a job that could not start or
// never imported torch, a trace that cannot be read.
Result<ScriptAnswer> estimate_script(const ScriptOptions& options);

}  // namespace vramdoc::backends
