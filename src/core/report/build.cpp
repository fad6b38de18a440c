#include "core/report/build.hpp"

#include <cmath>

#include "core/timeline/classify.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/quantify.hpp"
#include "core/timeline/trace_evidence.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::report {

namespace {

// The recording's start on the wall clock, when known: run's, else the timeline's header.
std::optional<std::uint64_t> recording_start(const JobSources& s, const timeline::Timeline& tl) {
  if (s.start_unix_ns) return s.start_unix_ns;
  if (tl.start_unix_seconds) return static_cast<std::uint64_t>(std::llround(*tl.start_unix_seconds * 1e9));
  return std::nullopt;
}

// The trace folder's sections into `r`, its notes into `notes` (see the policy in build.hpp).
void add_trace_folder(const JobSources& s, TraceFolder folder, JobReport& r, std::vector<std::string>& notes) {
  r.oom_snapshots = std::move(folder.oom_snapshots);
  if (folder.python && (*folder.python || folder.python_asked)) {  // a folder that cannot be read is the traces' to say
    auto& stacks = *folder.python;
    trace::PythonStackSet set = stacks ? std::move(*stacks) : trace::PythonStackSet{{}, {stacks.error()}};
    set.problems.insert(set.problems.end(), folder.oom_problems.begin(), folder.oom_problems.end());
    if (folder.python_asked || !set.processes.empty() || !set.problems.empty()) r.python = std::move(set);
  }
  if (!folder.traces) return;
  std::vector<std::string> warnings;
  auto& traces = *folder.traces;
  if (!traces) {
    warnings.push_back(traces.error() + "; the report below is the driver's alone");
  } else {
    for (const auto& problem : traces->problems) warnings.push_back("skipped " + problem);
    if (traces->processes.empty()) {
      warnings.push_back("no readable trace.*.vdt in " + folder.dir + "; the report below is the driver's alone");
    } else {
      r.traced = trace::build_overlay(traces->processes, r.timeline, recording_start(s, r.timeline));
      r.call_sites = std::move(*traces);
    }
  }
  for (const auto& w : warnings)
    if (r.traced || !r.python || w.starts_with("skipped ")) notes.push_back(w);
}

}  // namespace

BuiltReport build_job_report(JobSources s) {
  BuiltReport out;
  JobReport& r = out.report;
  if (s.timelines.empty()) {
    if (s.snapshot) r = report_of_snapshot(std::move(*s.snapshot));
    return out;
  }
  if (s.trace_folder) {
    r.timeline = s.timelines.front();  // the traces' clock: the recording's own
    add_trace_folder(s, std::move(*s.trace_folder), r, out.notes);
  }
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace");
  // a job of several processes is judged process by process (core/timeline/job.hpp).
  auto judged = timeline::judge_job(std::move(s.timelines), r.traced ? std::optional(timeline::trace_evidence(*r.traced)) : std::nullopt);
  r.timeline = std::move(judged.headline);
  r.diagnosis = std::move(judged.diagnosis);
  r.processes = std::move(judged.processes);
  r.run = std::move(s.run);
  if (r.run && !r.run->sampled) timeline::explain_unsampled(r.diagnosis, s.unsampled_why);
  r.snapshot = std::move(s.snapshot);
  if (s.job) {
    auto q = timeline::quantify(r.timeline, r.diagnosis, s.job->model, s.job->options);
    if (!q) {
      out.quantify_error = q.error() + " (" + s.job->model.name + ")";
    } else {
      r.diagnosis.quantified = std::move(*q);
      timeline::apply_quantified(r.diagnosis);
    }
  }
  return out;
}

}  // namespace vramdoc::report
