// vramdoc analyze FILE... [--json] [--html FILE] [--since T] [--until T] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose recorded timelines (several files, one per node, are one job) and a PyTorch memory
// snapshot (a pickle, told by its first bytes) as one report (core/report/build.hpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <tuple>

#include "backends/trace/folder.hpp"
#include "cli/command.hpp"
#include "cli/estimator_options.hpp"
#include "cli/style.hpp"
#include "core/report/build.hpp"
#include "core/snapshot/file.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/reader.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct AnalyzeOptions {
  std::vector<std::string> files;
  std::string html, trace_dir, since, until;
  EstimatorArgs job;
  bool json = false;
};

// --since / --until as a window of the recording's clock; the error names the option.
Result<timeline::Window> read_window(const AnalyzeOptions& o) {
  timeline::Window w;
  for (auto [text, bound, option] : {std::tuple{&o.since, &w.since_seconds, "--since"}, std::tuple{&o.until, &w.until_seconds, "--until"}}) {
    if (text->empty()) continue;
    auto seconds = parse_duration(*text);
    if (!seconds) return make_error(std::string(option) + ": " + seconds.error());
    *bound = *seconds;
  }
  if (w.since_seconds && w.until_seconds && *w.since_seconds >= *w.until_seconds)
    return make_error("--since " + o.since + " is not before --until " + o.until + ": the window holds nothing");
  return w;
}

// The files given, read: the timelines, and at most one PyTorch memory snapshot (told by its
// first bytes); the error names the file.
Result<report::JobSources> read_sources(const AnalyzeOptions& o) {
  report::JobSources s;
  auto job = read_job(o.job);
  if (!job) return make_error(job.error());
  s.job = std::move(*job);
  std::string snapshot_file;
  for (const auto& f : o.files) {
    if (!snapshot::is_pickle_file(f)) continue;
    if (!snapshot_file.empty()) return make_error("one memory snapshot per report: " + snapshot_file + " and " + f + " (analyze each alone)");
    snapshot_file = f;
  }
  auto window = read_window(o);
  if (!window) return make_error(window.error());
  const std::size_t timelines = o.files.size() - (snapshot_file.empty() ? 0 : 1);
  if (!o.trace_dir.empty() && timelines > 1) return make_error("--trace-dir goes with one timeline file, not " + std::to_string(timelines));
  if (timelines == 0 && (!o.trace_dir.empty() || s.job))
    return make_error("--trace-dir and a job (--config, --model) go with a timeline, not with a memory snapshot alone");
  if (!snapshot_file.empty()) {
    auto snap = snapshot::read_snapshot_report(snapshot_file);
    if (!snap) return make_error(snap.error());
    s.snapshot = std::move(*snap);
  }
  for (const auto& f : o.files) {
    if (f == snapshot_file) continue;
    auto tl = timeline::read_timeline_file(f, *window);
    if (!tl) return make_error(tl.error());
    s.timelines.push_back(std::move(*tl));
  }
  if (!o.trace_dir.empty()) s.trace_folder = backends::read_trace_folder(o.trace_dir, true, true, false);
  return s;
}

}  // namespace

int cmd_analyze(const std::vector<std::string>& args) {
  CLI::App app{"Diagnose recorded GPU-memory timelines: leak, insufficient, fragmentation, plateau, stable, per process\n"
               "and for the job. Reads timelines written by 'vramdoc run --out' (versions 1 and 2), the shared timeline\n"
               "JSON, and PyTorch memory snapshots (torch.cuda.memory._dump_snapshot, the pickle memory_viz reads);\n"
               "several timelines (one per node of a job) are one job, a snapshot given with them a section of its report.", "analyze"};
  AnalyzeOptions o;
  app.add_option("FILE", o.files, "the timeline file(s), one per node of a multi-node job (- reads standard input), and/or one PyTorch memory snapshot (.pickle)")->required();
  app.add_flag("--json", o.json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", o.html, "also write a self-contained HTML report to this file");
  add_estimator_options(app, o.job, EstimatorUse::Job);
  app.add_option("--trace-dir", o.trace_dir,
                 "also show the allocation traces in DIR (vramdoc run --trace: traced bytes, call sites) and the "
                 "Python lines (--trace-python); one timeline file only");
  app.add_option("--since", o.since, "analyse only the recording from this time on (its own clock: 90s, 2h, 1.5d): a window of a long job")->type_name("DURATION");
  app.add_option("--until", o.until, "analyse only the recording up to this time (its own clock); the job's end and OOM are then not the window's")->type_name("DURATION");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (std::count(o.files.begin(), o.files.end(), "-") + (o.job.config == "-") > 1)
    return fail("analyze", "standard input (-) is read once: give - for one file or for --config, not both");

  auto sources = read_sources(o);
  if (!sources) return fail("analyze", sources.error());
  auto built = report::build_job_report(std::move(*sources));
  for (const auto& note : built.notes) fail("analyze", "--trace-dir: " + note, 0);
  if (built.quantify_error) return fail("analyze", *built.quantify_error);
  const report::JobReport& r = built.report;
  if (!o.html.empty()) {
    if (auto w = write_text_file(o.html, report::render_html(r)); !w) return fail("analyze", w.error());
  }
  print(o.json ? report::render_json(r) : report::render_text(r, style_for(stdout)));
  return timeline::is_problem(r.diagnosis.verdict) ? kFailure : kOk;  // "no": a leak, insufficient or fragmentation
}

}  // namespace vramdoc::cli
