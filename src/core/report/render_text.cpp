// The job report for a terminal: one function per section, composed in report order.
#include "core/report/job_report.hpp"
#include "core/snapshot/render.hpp"
#include "core/terminal_safe.hpp"
#include "core/timeline/render.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::report {

namespace {

// Without sampling, run said so when it started and the verdict says why it cannot tell: once each.
std::string run_text(const JobRun& run) {
  const std::string how = run.detached_job_pid ? "vramdoc run: SIGTERM stopped the recording; the job (pid " +
                                                     std::to_string(*run.detached_job_pid) + ") goes on, its output still passed through"
                                               : "vramdoc run: the job exited with status " + std::to_string(run.exit_status);
  return "\n" + how + "; timeline: " + (run.timeline_file.empty() ? std::string("none (not written)") : terminal_safe(run.timeline_file)) + "\n";
}

std::string oom_snapshot_text(const snapshot::SnapshotReport& s) {
  return "\nPyTorch's memory snapshot at the process's first out-of-memory error (--trace-python):\n" + snapshot::render_snapshot_text(s);
}

std::string python_text(const trace::PythonStackSet& python) {
  return "\n" + trace::render_python_stacks_text(python.processes, python.problems);
}

}  // namespace

std::string render_call_sites_text(const trace::TraceSet& traces) {
  // No readable trace but problems: the problems say why ("no trace files" would mislead).
  std::string out = traces.processes.empty() && !traces.problems.empty() ? "" : trace::render_trace_text(traces.processes);
  for (const auto& problem : traces.problems) out += "vramdoc trace: " + terminal_safe_lines(problem) + "\n";
  return out;
}

std::string render_text(const JobReport& r, const Style& style) {
  std::string out;
  if (r.run) out += run_text(*r.run);
  out += timeline::render_text(r.timeline, r.diagnosis, r.processes ? &*r.processes : nullptr, style);
  if (r.traced) out += trace::render_overlay_text(*r.traced, r.timeline);
  if (r.call_sites) out += "\n" + render_call_sites_text(*r.call_sites);
  for (const auto& s : r.oom_snapshots) out += oom_snapshot_text(s);
  if (r.python) out += python_text(*r.python);
  if (r.snapshot) out += "\n" + snapshot::render_snapshot_text(*r.snapshot);
  return out;
}

}  // namespace vramdoc::report
