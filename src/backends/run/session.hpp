// `vramdoc run`'s edge: the timeline file opened, the job's environment prepared (tracing, the
// Python hooks, the marker file), the job run under the recorder with its output passed through,
// and what the recording holds. The report is core's (core/report/build.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/result.hpp"
#include "core/timeline/step_regex.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::backends {

// What `run` was asked, checked by the CLI.
struct RunRequest {
  std::vector<std::string> command;        // the job, argv[0] searched in PATH
  double interval_seconds = 0.02;
  std::string out;                         // the timeline file; empty: vramdoc-PROGRAM-TIME.jsonl, new and private
  std::optional<timeline::StepRegex> step_regex;  // --step-regex
  bool trace = false;                      // --trace
  bool trace_python = false;               // --trace-python
  bool step_hook = true;                   // not --no-step-hook
  std::string trace_dir;                   // --trace-dir; empty: the timeline's name + .trace
  bool tracer_built = false;               // this vramdoc has the CUPTI tracer (cli/features.hpp)
  bool forward_sigterm = false;            // --sigterm forward: SIGTERM goes to the job, as SIGINT does
  std::function<void(const std::string&)> note;  // a warning for the user, said at once (stderr)
};

// What the recording holds once the job ended.
struct RunRecord {
  timeline::Timeline timeline;       // the lines written, as analyze would read them
  int status = 0;                    // the job's, as a shell reports it; 143 when detached
  std::optional<long> detached_job_pid;  // SIGTERM stopped the recording; this job went on
  bool sampled = false;              // GPU memory sampling was available
  std::string unsampled_why;         // why not, when it was not
  std::uint64_t start_unix_ns = 0;   // the wall clock at the timeline's t = 0
  std::string timeline_file;         // where the timeline went
  std::optional<std::string> timeline_lost;  // why the timeline file is incomplete (a failed write)
  std::optional<std::string> trace_dir;      // the trace folder to read back (--trace, --trace-dir, --trace-python)
  bool traces = false;                       // it may hold allocation traces (--trace, or --trace-dir alone)
  bool python = false;                       // it may hold the Python hook's files (--trace-python)
};

// A job that could not be started: the system's errno (ENOENT: no such command).
struct NotStarted {
  std::string message;
  int error_number = 0;
};

class RunSession {
 public:
  // Opens the timeline file and prepares the job's environment; an error (a bad --out, tracing
  // that cannot be set up) leaves no file behind.
  static Result<std::unique_ptr<RunSession>> prepare(RunRequest request);
  ~RunSession();
  // Runs the job under the recorder until it ends. The timeline file gets the header, every
  // sample, mark and message as it comes, and the end line.
  std::variant<RunRecord, NotStarted> record();

 private:
  struct State;
  explicit RunSession(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace vramdoc::backends
