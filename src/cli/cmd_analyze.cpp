// vramdoc analyze FILE [--json] [--html FILE] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose a recorded timeline.
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/model_input.hpp"
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
  app.add_option("FILE", file, "the timeline file")->required();
  app.add_flag("--json", json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", html, "also write a self-contained HTML report to this file");
  add_job_options(app, job);
  app.add_option("--trace-dir", trace_dir, "also show the traced bytes of the allocation traces in DIR (vramdoc run --trace)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  auto input = read_job(job);
  if (!input) return fail("analyze", input.error());
  auto tl = load_timeline(file);
  if (!tl) return fail("analyze", tl.error());
  auto diagnosis = timeline::classify(*tl);
  if (auto q = quantify_job(*input, *tl, diagnosis); !q) return fail("analyze", q.error());
  std::optional<timeline::TracedSeries> traced;
  if (!trace_dir.empty()) {
    std::vector<std::string> warnings;
    traced = overlay_from_dir(trace_dir, *tl, std::nullopt, warnings);
    for (const auto& w : warnings) std::fprintf(stderr, "vramdoc analyze: --trace-dir: %s\n", w.c_str());
  }
  if (!html.empty()) {
    if (auto w = write_text_file(html, timeline::render_html(*tl, diagnosis, traced ? &*traced : nullptr)); !w) return fail("analyze", w.error());
  }
  print(json ? with_trace_json(timeline::render_json(*tl, diagnosis), traced)
             : timeline::render_text(*tl, diagnosis) + (traced ? trace::render_overlay_text(*traced, *tl) : ""));
  return kOk;
}

}  // namespace vramdoc::cli
