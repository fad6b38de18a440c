// The sample lines of a version 2 recording (docs/timeline-format.md, "Samples"): one line per
// tick with every process series and every GPU's used memory, left out while nothing changes so
// that a job with 8 ranks sampled every 20 ms for hours stays a small file.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// One reading of the job, as the recorder takes it every interval.
struct Tick {
  double t_seconds = 0;
  std::uint64_t process_used_bytes = 0;            // summed over the job's processes on all GPUs
  std::optional<std::uint64_t> device_used_bytes;  // the GPUs the job uses
  struct Holding {
    std::uint32_t pid = 0;
    unsigned gpu = 0;  // GPU index
    std::uint64_t bytes = 0;
  };
  std::vector<Holding> processes;                          // each process on each GPU it holds memory on
  std::vector<std::optional<std::uint64_t>> gpu_used_bytes;  // per GPU of the header, in its order
};

// Turns ticks into lines. A (pid, GPU) seen for the first time gets a series line (`who` says
// who it is) before the sample that first carries it. A tick equal to the last line written (all
// but t) is left out unless `heartbeat_seconds` have passed since; when the next line is
// written, the last tick left out goes first, so each level's first and last readings are in the
// file and a reader needs no interpolation.
class TickWriter {
 public:
  using Who = std::function<ProcessInfo(std::uint32_t pid, unsigned gpu)>;
  explicit TickWriter(double heartbeat_seconds = 1.0) : heartbeat_(heartbeat_seconds) {}
  // The lines for `tick` (possibly none).
  std::string add(const Tick& tick, const Who& who);
  // At the end of the recording: the last tick when it was left out, else nothing.
  std::string finish();

 private:
  struct Row {
    double t = 0;
    std::uint64_t process_used = 0;
    std::optional<std::uint64_t> device_used;
    std::vector<std::uint64_t> series;
    std::vector<std::optional<std::uint64_t>> gpus;
    bool same_values(const Row& o) const;
  };
  static std::string row_line(const Row& r);

  double heartbeat_;
  std::map<std::pair<std::uint32_t, unsigned>, std::size_t> ids_;
  std::optional<Row> written_, held_;
};

}  // namespace vramdoc::timeline
