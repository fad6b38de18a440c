#include "core/snapshot/file.hpp"

#include "core/input_file.hpp"
#include "core/snapshot/model.hpp"

namespace vramdoc::snapshot {

bool is_pickle_file(const std::string& path) {
  // Through the bounded reader: a FIFO or a device is not opened (the timeline reader then names it).
  const auto head = read_file_head(path, 2);
  return head && head->size() == 2 && looks_like_pickle(*head);
}

Result<SnapshotReport> read_snapshot_report(const std::string& path) {
  auto snap = read_snapshot_file(path);
  if (!snap) return make_error(snap.error());
  return analyze_snapshot(*snap, path);
}

}  // namespace vramdoc::snapshot
