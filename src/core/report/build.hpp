// The one builder of a job's report, for `run` and `analyze` alike: the recording(s) judged as
// one job, weighing what the allocation trace saw, with the sections of a trace folder, a PyTorch
// snapshot and the job's model (quantified remedies). Policy, the same for both commands:
// - traces are put on the recording's clock by the wall clock when the recording knows its start
//   (run; a version 2 timeline's header), else by the first rise of the driver's number;
// - a trace folder that cannot be read, or holds no readable trace, leaves the report the
//   driver's alone, and a note says so (unless the folder holds the Python hook's files); a
//   file that cannot be read is a note and a problem of the call-sites section;
// - the Python lines are a section when --trace-python asked for them or the folder holds any.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/estimator/model_source.hpp"
#include "core/report/job_report.hpp"
#include "core/result.hpp"

namespace vramdoc::report {

// What a trace folder held (backends/trace/folder.hpp reads it).
struct TraceFolder {
  std::string dir;
  std::optional<Result<trace::TraceSet>> traces;        // the .vdt files, when they were looked for
  std::optional<Result<trace::PythonStackSet>> python;  // the python.*.json files, when looked for
  bool python_asked = false;                            // run --trace-python: the section even when empty
  std::vector<snapshot::SnapshotReport> oom_snapshots;  // python.PID.oom.pickle
  std::vector<std::string> oom_problems;                // the ones that could not be read
};

// Everything a report is made from.
struct JobSources {
  std::vector<timeline::Timeline> timelines;       // one job's recordings (one per node or process); may be empty with a snapshot
  std::optional<JobRun> run;                       // `run`: the job's exit, its timeline file, whether GPU memory was sampled
  std::optional<std::uint64_t> start_unix_ns;      // `run`: the wall clock at t = 0, exactly
  std::string unsampled_why;                       // `run` without GPU sampling: why
  std::optional<TraceFolder> trace_folder;         // run --trace / --trace-python, analyze --trace-dir
  std::optional<snapshot::SnapshotReport> snapshot;  // analyze snap.pickle
  std::optional<estimator::JobModel> job;          // --config / --model: quantifies the remedies
};

struct BuiltReport {
  JobReport report;
  std::vector<std::string> notes;               // for the user, before the report (stderr)
  std::optional<std::string> quantify_error;    // the job's model could not quantify the remedies
};

// The report of `sources` (at least one timeline or a snapshot).
BuiltReport build_job_report(JobSources sources);

}  // namespace vramdoc::report
