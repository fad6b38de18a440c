#include "cli/snapshot_io.hpp"

#include <fstream>

#include "core/snapshot/model.hpp"

namespace vramdoc::cli {

bool is_pickle_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {0, 0};
  return in.read(head, 2) && snapshot::looks_like_pickle(std::string_view(head, 2));
}

Result<snapshot::SnapshotReport> load_snapshot_report(const std::string& path) {
  auto snap = snapshot::read_snapshot_file(path);
  if (!snap) return make_error(snap.error());
  return snapshot::analyze_snapshot(*snap, path);
}

}  // namespace vramdoc::cli
