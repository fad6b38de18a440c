#include <fstream>

#include "core/snapshot/builder.hpp"
#include "core/snapshot/model.hpp"

namespace vramdoc::snapshot {

bool looks_like_pickle(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5;
}

Result<Snapshot> read_snapshot(std::istream& in, const SnapshotLimits& limits) {
  Snapshot s;
  detail::SnapshotBuilder builder(s, limits);
  auto stats = read_pickle(in, builder, limits.pickle);
  if (!stats) return make_error(stats.error());
  if (!builder.finish()) return make_error(builder.error);
  s.pickle = *stats;
  return s;
}

Result<Snapshot> read_snapshot_file(const std::string& path, const SnapshotLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open it");
  auto s = read_snapshot(in, limits);
  if (!s) return make_error(path + ": " + s.error());
  return s;
}

}  // namespace vramdoc::snapshot
