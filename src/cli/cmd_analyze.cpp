// vramdoc analyze FILE [--json] [--html FILE] [--trace-dir DIR] [--config model.json]: diagnose a recorded timeline.
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/render.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::cli {

int cmd_analyze(const std::vector<std::string>& args) {
  CLI::App app{"Diagnose a recorded GPU-memory timeline: leak, insufficient, fragmentation, plateau, stable.\n"
               "Reads timelines written by 'vramdoc run --out' and the shared timeline JSON.", "analyze"};
  std::string file, html, config, trace_dir;
  bool json = false;
  app.add_option("FILE", file, "the timeline file")->required();
  app.add_flag("--json", json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", html, "also write a self-contained HTML report to this file");
  app.add_option("--config", config, "model config (JSON) to quantify remedies with the estimator (not yet connected)");
  app.add_option("--trace-dir", trace_dir, "also show the traced bytes of the allocation traces in DIR (vramdoc run --trace)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  auto tl = load_timeline(file);
  if (!tl) return fail("analyze", tl.error());
  const auto diagnosis = timeline::classify(*tl);
  // Hook for the estimator (src/core/estimator): quantify the remedies for --config. Until it
  // lands, say that the remedies are not quantified rather than guess.
  if (!config.empty())
    std::fprintf(stderr, "vramdoc analyze: --config %s: quantified remedies need the estimator, not in this build yet\n", config.c_str());
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
