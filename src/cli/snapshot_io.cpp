#include "cli/snapshot_io.hpp"

#include <fstream>

#include "cli/command.hpp"
#include "cli/timeline_io.hpp"
#include "core/snapshot/analysis.hpp"
#include "core/snapshot/model.hpp"
#include "core/snapshot/render.hpp"

namespace vramdoc::cli {

bool is_pickle_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {0, 0};
  return in.read(head, 2) && snapshot::looks_like_pickle(std::string_view(head, 2));
}

int analyze_snapshot_file(const std::string& path, bool json, const std::string& html) {
  auto snap = snapshot::read_snapshot_file(path);
  if (!snap) return fail("analyze", snap.error());
  const auto report = snapshot::analyze_snapshot(*snap, path);
  if (!html.empty())
    if (auto w = write_text_file(html, snapshot::render_snapshot_html(report)); !w) return fail("analyze", w.error());
  print(json ? snapshot::render_snapshot_json(report) : snapshot::render_snapshot_text(report));
  return kOk;
}

}  // namespace vramdoc::cli
