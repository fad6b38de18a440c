// vramdoc analyze FILE... [--json] [--html FILE] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose recorded timelines; several files (one per node) are one job.
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/render.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::cli {

namespace {

struct Traces {
  std::optional<timeline::TracedSeries> traced;
  std::optional<LoadedPythonStacks> python;
};

// The traced bytes and the Python lines of --trace-dir, on the headline's clock.
Traces load_trace_dir(const std::string& dir, const timeline::Timeline& headline) {
  Traces t;
  if (auto stacks = load_python_stacks(dir); stacks && (!stacks->processes.empty() || !stacks->problems.empty())) {
    t.python = std::move(*stacks);
  }
  std::vector<std::string> warnings;
  t.traced = overlay_from_dir(dir, headline, std::nullopt, warnings);
  for (const auto& w : warnings) {
    // A folder of --trace-python alone has no .vdt files: only unreadable ones are worth a line.
    if (t.traced || !t.python || w.starts_with("skipped ")) std::fprintf(stderr, "vramdoc analyze: --trace-dir: %s\n", w.c_str());
  }
  return t;
}

}  // namespace

int cmd_analyze(const std::vector<std::string>& args) {
  CLI::App app{"Diagnose recorded GPU-memory timelines: leak, insufficient, fragmentation, plateau, stable, per process\n"
               "and for the job. Reads timelines written by 'vramdoc run --out' (versions 1 and 2) and the shared timeline\n"
               "JSON; several files (one per node of a job) are diagnosed as one job.", "analyze"};
  std::vector<std::string> files;
  std::string html, trace_dir;
  JobArgs job;
  bool json = false;
  app.add_option("FILE", files, "the timeline file(s): one per node of a multi-node job")->required();
  app.add_flag("--json", json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", html, "also write a self-contained HTML report to this file");
  add_job_options(app, job);
  app.add_option("--trace-dir", trace_dir,
                 "also show the traced bytes of the allocation traces in DIR (vramdoc run --trace) and the Python lines "
                 "(--trace-python); one timeline file only");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  auto input = read_job(job);
  if (!input) return fail("analyze", input.error());
  if (!trace_dir.empty() && files.size() > 1) return fail("analyze", "--trace-dir goes with one timeline file, not " + std::to_string(files.size()));
  std::vector<timeline::Timeline> timelines;
  for (const auto& f : files) {
    auto tl = load_timeline(f);
    if (!tl) return fail("analyze", tl.error());
    timelines.push_back(std::move(*tl));
  }
  const Traces t = trace_dir.empty() ? Traces{} : load_trace_dir(trace_dir, timelines.front());
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace").
  auto judged = timeline::judge_job(timelines, t.traced ? std::optional(timeline::trace_evidence(*t.traced)) : std::nullopt);
  if (auto q = quantify_job(*input, judged.headline, judged.diagnosis); !q) return fail("analyze", q.error());
  const auto* processes = judged.processes ? &*judged.processes : nullptr;
  const std::string python_text = t.python ? trace::render_python_stacks_text(t.python->processes, t.python->problems) : "";
  if (!html.empty()) {
    std::vector<timeline::Appendix> appendices;
    if (t.python) appendices.push_back({"python-lines", "Python lines (--trace-python)", python_text});
    const auto page = timeline::render_html(judged.headline, judged.diagnosis, t.traced ? &*t.traced : nullptr, appendices, processes);
    if (auto w = write_text_file(html, page); !w) return fail("analyze", w.error());
  }
  if (json) {
    const std::string out = with_trace_json(timeline::render_json(judged.headline, judged.diagnosis, processes), t.traced);
    print(t.python ? with_python_json(out, *t.python) : out);
  } else {
    print(timeline::render_text(judged.headline, judged.diagnosis, processes) +
          (t.traced ? trace::render_overlay_text(*t.traced, judged.headline) : "") + (t.python ? "\n" + python_text : ""));
  }
  return kOk;
}

}  // namespace vramdoc::cli
