// vramdoc analyze FILE [--json] [--html FILE] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose a recorded timeline.
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/style.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/render.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::cli {

int cmd_analyze(const std::vector<std::string>& args) {
  CLI::App app{"Diagnose a recorded GPU-memory timeline: leak, insufficient, fragmentation, plateau, stable.\n"
               "Reads timelines written by 'vramdoc run --out' and the shared timeline JSON.", "analyze"};
  std::string file, html, trace_dir;
  JobArgs job;
  bool json = false;
  app.add_option("FILE", file, "the timeline file (- reads standard input)")->required();
  app.add_flag("--json", json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", html, "also write a self-contained HTML report to this file");
  add_job_options(app, job);
  app.add_option("--trace-dir", trace_dir,
                 "also show the traced bytes of the allocation traces in DIR (vramdoc run --trace) and the Python lines "
                 "(--trace-python)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  auto input = read_job(job);
  if (!input) return fail("analyze", input.error());
  auto tl = load_timeline(file);
  if (!tl) return fail("analyze", tl.error());
  std::optional<timeline::TracedSeries> traced;
  std::optional<LoadedPythonStacks> python;
  if (!trace_dir.empty()) {
    if (auto stacks = load_python_stacks(trace_dir); stacks && (!stacks->processes.empty() || !stacks->problems.empty())) {
      python = std::move(*stacks);
    }
    std::vector<std::string> warnings;
    traced = overlay_from_dir(trace_dir, *tl, std::nullopt, warnings);
    for (const auto& w : warnings) {
      // A folder of --trace-python alone has no .vdt files: only unreadable ones are worth a line.
      if (traced || !python || w.starts_with("skipped ")) std::fprintf(stderr, "vramdoc analyze: --trace-dir: %s\n", w.c_str());
    }
  }
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace").
  auto diagnosis = timeline::classify(*tl, traced ? std::optional(timeline::trace_evidence(*traced)) : std::nullopt);
  if (auto q = quantify_job(*input, *tl, diagnosis); !q) return fail("analyze", q.error());
  const std::string python_text = python ? trace::render_python_stacks_text(python->processes, python->problems) : "";
  if (!html.empty()) {
    std::vector<timeline::Appendix> appendices;
    if (python) appendices.push_back({"python-lines", "Python lines (--trace-python)", python_text});
    const auto page = timeline::render_html(*tl, diagnosis, traced ? &*traced : nullptr, appendices);
    if (auto w = write_text_file(html, page); !w) return fail("analyze", w.error());
  }
  if (json) {
    const std::string out = with_trace_json(timeline::render_json(*tl, diagnosis), traced);
    print(json_document("vramdoc.analyze/1", python ? with_python_json(out, *python) : out));
  } else {
    print(highlight(timeline::render_text(*tl, diagnosis), style_for(stdout)) +
          (traced ? trace::render_overlay_text(*traced, *tl) : "") + (python ? "\n" + python_text : ""));
  }
  return is_problem(diagnosis.verdict) ? kFailure : kOk;
}

}  // namespace vramdoc::cli
