#include "cli/snapshot_io.hpp"

#include <fstream>

#include "cli/command.hpp"
#include "cli/timeline_io.hpp"
#include "core/report/job_report.hpp"
#include "core/snapshot/analysis.hpp"
#include "core/snapshot/model.hpp"

namespace vramdoc::cli {

bool is_pickle_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {0, 0};
  return in.read(head, 2) && snapshot::looks_like_pickle(std::string_view(head, 2));
}

int analyze_snapshot_file(const std::string& path, bool json, const std::string& html) {
  auto snap = snapshot::read_snapshot_file(path);
  if (!snap) return fail("analyze", snap.error());
  report::JobReport r;
  auto analysed = snapshot::analyze_snapshot(*snap, path);
  r.timeline = std::move(*analysed.timeline);
  r.diagnosis = std::move(*analysed.diagnosis);
  analysed.timeline.reset();
  analysed.diagnosis.reset();
  r.snapshot = std::move(analysed);
  if (!html.empty())
    if (auto w = write_text_file(html, report::render_html(r)); !w) return fail("analyze", w.error());
  print(json ? report::render_json(r) : report::render_text(r));
  return kOk;
}

}  // namespace vramdoc::cli
