// The job report as one JSON object: the diagnosis's object, one key per section present.
#include "core/report/job_report.hpp"
#include "core/json_document.hpp"
#include "core/snapshot/render.hpp"
#include "core/timeline/render_job.hpp"
#include "core/timeline/render.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::report {

namespace {

using nlohmann::json;

json run_json(const JobRun& run) {
  json detached = run.detached_job_pid ? json{{"job_pid", *run.detached_job_pid}, {"by", "SIGTERM"}} : json(nullptr);
  return {{"timeline_file", run.timeline_file.empty() ? json(nullptr) : json(run.timeline_file)}, {"sampled", run.sampled},
          {"detached", detached}};
}

json python_json(const trace::PythonStackSet& python) {
  return {{"processes", trace::python_stacks_json(python.processes)}, {"problems", python.problems}};
}

}  // namespace

json call_sites_json(const trace::TraceSet& traces) {
  json out = trace::trace_report_json(traces.processes);
  out["problems"] = traces.problems;
  return out;
}

std::string render_json(const JobReport& r) {
  json out = timeline::diagnosis_json(r.timeline, r.diagnosis);
  if (r.run) out["run"] = run_json(*r.run);
  if (r.processes) out["processes"] = timeline::processes_json(*r.processes);
  if (r.traced) out["trace"] = trace::overlay_json(*r.traced);
  if (r.call_sites) out["call_sites"] = call_sites_json(*r.call_sites);
  if (r.python) out["python_stacks"] = python_json(*r.python);
  if (!r.oom_snapshots.empty()) {
    out["oom_snapshots"] = json::array();
    for (const auto& s : r.oom_snapshots) out["oom_snapshots"].push_back(snapshot::snapshot_json(s));
  }
  if (r.snapshot) out["snapshot"] = snapshot::snapshot_json(*r.snapshot);
  return json_document(r.run ? "vramdoc.run/1" : "vramdoc.analyze/1", out);
}

std::string render_call_sites_json(const trace::TraceSet& traces) { return json_document("vramdoc.trace/1", call_sites_json(traces)); }

}  // namespace vramdoc::report
