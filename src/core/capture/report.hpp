// `vramdoc estimate -- python train.py`'s answer: the capture's trace replayed (replay.hpp), the
// driver's overhead for the libraries the job used, the notes on what could not be faked, and
// whether it fits the card; rendered as text or JSON (render.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/capture/replay.hpp"
#include "core/capture/trace.hpp"

namespace vramdoc::capture {

// What the driver charges beyond reserved memory: the CUDA context and the libraries' kernels
// (measured on the H200, docs/estimator.md, "Estimating a script").
std::uint64_t process_overhead_bytes(const Libraries& used);

// One capture of the job at one value of {batch} (or of the command as given).
struct Trial {
  std::optional<std::uint64_t> batch;  // the value {batch} took
  bool ran_to_end = false;             // the capture reached its steps or the job's end
  std::string problem;                 // why not (the job's error, a timeout)
  std::uint64_t process_bytes = 0;
  bool fits = false;
};

struct Report {
  std::vector<std::string> command;  // the job as run (the last trial's)
  Replay replay;
  std::uint64_t overhead_bytes = 0;
  std::uint64_t process_bytes = 0;   // reserved + overhead: what nvidia-smi would show
  std::vector<Note> notes;
  std::string end_reason, error_where, error, torch_version;
  std::uint64_t steps = 0, forwards = 0, steps_asked = 0;
  bool timed_out = false;
  int exit_status = 0;
  std::string target_name;                 // the card, when one was given or found
  std::optional<std::uint64_t> usable_bytes;
  std::optional<std::uint64_t> max_batch;  // --max-batch: the largest captured batch that fits
  std::vector<Trial> trials;
};

// The report of one trace on `options.target`. `timed_out` and `exit_status` are the job's.
Report build_report(const Trace& trace, const ReplayOptions& options);

// Whether `process_bytes` plus the estimator's safety margin fits in `usable_bytes`.
bool fits(std::uint64_t process_bytes, std::uint64_t usable_bytes);

// Why the capture did not reach its steps, in words ("" when it did, or the job simply ended).
std::string shortfall(const Report& r);

std::string render_text(const Report& r);
std::string render_json(const Report& r);  // the object, without the schema wrapper

}  // namespace vramdoc::capture
