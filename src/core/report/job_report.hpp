// One job's report: the model that `run` and `analyze` fill and every output format renders
// (text for the terminal, one JSON object, one HTML page). It composes sections that their own
// modules render (the diagnosis: core/timeline; the traces: core/trace); it adds no analysis.
//
// A new section is one member here (std::optional: a report may lack it) and one function per
// format, called in its place by render_text (render_text.cpp), render_json (render_json.cpp)
// and render_html (render_html.cpp). docs/architecture.md, "Reports".
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/snapshot/analysis.hpp"
#include "core/style.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/timeline.hpp"
#include "core/timeline/traced.hpp"
#include "core/trace/python_stacks.hpp"
#include "core/trace/report.hpp"

namespace vramdoc::report {

// What `run` knows beyond the timeline: how the job ended and where the timeline went.
struct JobRun {
  int exit_status = 0;        // as a shell reports it: 128+N when killed by signal N
  std::string timeline_file;  // the file `run` wrote; empty when it could not be written
  bool sampled = true;        // false: GPU memory sampling was unavailable (no driver)
  std::optional<long> detached_job_pid = std::nullopt;  // SIGTERM stopped the recording; this job went on
};

struct JobReport {
  timeline::Timeline timeline;
  timeline::Diagnosis diagnosis;
  std::optional<JobRun> run;                     // set by `run`, empty for `analyze`
  // A job of several processes or files: each one's verdict; `timeline` and `diagnosis` are then
  // the worst process's, with the job's verdict as the summary (core/timeline/job.hpp).
  std::optional<timeline::JobVerdicts> processes;
  std::optional<timeline::TracedSeries> traced;  // the tracer's bytes on the timeline's clock
  std::optional<trace::TraceSet> call_sites;     // the tracer's call sites (run --trace, analyze --trace-dir)
  std::optional<trace::PythonStackSet> python;   // the Python lines (run --trace-python)
  // run --trace-python: PyTorch's snapshot at each process's first OOM (python.PID.oom.pickle)
  std::vector<snapshot::SnapshotReport> oom_snapshots;
  std::optional<snapshot::SnapshotReport> snapshot;  // analyze snap.pickle: what only a snapshot shows
};

// The report of a snapshot analysed alone: the snapshot's timeline and verdict (from its allocator
// trace, or its OOM's numbers) become the report's, so its section keeps what only a snapshot adds.
// Given with a timeline instead, a snapshot keeps its verdict: the section shows it beside the job's.
JobReport report_of_snapshot(snapshot::SnapshotReport s);

// The terminal report: run's exit line, the diagnosis (the processes' table after its verdict,
// the verdict coloured with `style`), then each section present.
std::string render_text(const JobReport& r, const Style& style = {});
// The JSON document (vramdoc.run/1 with `run`, else vramdoc.analyze/1): the diagnosis's fields,
// plus "run", "processes", "trace" (traced bytes), "call_sites", "python_stacks", "oom_snapshots"
// and "snapshot" when present.
std::string render_json(const JobReport& r);
// A self-contained HTML page: the diagnosis's chart (with the traced bytes), then the sections.
std::string render_html(const JobReport& r);

// The call-sites section alone (also `vramdoc trace DIR`): leaks, peak contributors and refused
// allocations by call site, then one line per problem.
std::string render_call_sites_text(const trace::TraceSet& traces);
// {"processes": [...], "problems": [...]}: every group with its full symbolised stack.
nlohmann::json call_sites_json(const trace::TraceSet& traces);
// `vramdoc trace DIR --json`: those members as the JSON document vramdoc.trace/1.
std::string render_call_sites_json(const trace::TraceSet& traces);
// `vramdoc trace DIR --html`: a page of the traced bytes over time per process and the call sites.
std::string render_trace_page(const trace::TraceSet& traces, const std::string& title);

}  // namespace vramdoc::report
