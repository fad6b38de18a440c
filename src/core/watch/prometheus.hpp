// The Prometheus text exposition (0.0.4) and OpenMetrics 1.0 of one snapshot: the metrics
// `vramdoc watch --serve` answers /metrics with. A value the device does not report is left
// out (no sample line), never written as 0.
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/watch/dcgm.hpp"
#include "core/watch/model.hpp"

namespace vramdoc::watch {

enum class ExpositionFormat {
  Prometheus,   // text/plain; version=0.0.4
  OpenMetrics,  // application/openmetrics-text; version=1.0.0 (ends with "# EOF")
};

// What the exporter publishes about processes, and how many (docs/security.md).
struct ExportOptions {
  bool command = false;             // --export-command: the redacted command line as a label
  std::size_t max_processes = 256;  // processes per exposition, the largest users of memory first
  MetricSets metrics;               // --metrics: vramdoc's families, dcgm-exporter's, or both
  std::string hostname;             // the Hostname label of the dcgm families (empty: none)
};

// Label values longer than this many bytes are cut (at a character boundary) and end in "...".
inline constexpr std::size_t kMaxLabelBytes = 256;

// The exposition: vramdoc_up (always), then the sets `options.metrics` names. vramdoc's: HELP and
// TYPE lines, one sample per GPU (labels gpu, uuid) or per process (gpu, uuid, pid) for at most
// `options.max_processes` processes, the exporter's own counts (processes left out now,
// `dropped_total` so far); dcgm-exporter's: render_dcgm_metrics. Metric names: docs/watch.md.
std::string render_metrics(const Snapshot& snapshot, ExpositionFormat format = ExpositionFormat::Prometheus,
                           const ExportOptions& options = {}, std::uint64_t dropped_total = 0);

// The processes an exposition keeps, as (GPU position, process position) in the snapshot: the
// `max_processes` that use the most memory (unknown last), ties by GPU and PID.
std::vector<std::pair<std::size_t, std::size_t>> exported_processes(const Snapshot& snapshot, std::size_t max_processes);

// Counts the processes a capped exposition leaves out: each (GPU, PID) once when it starts being
// left out. The state is the set left out by the previous snapshot, so memory stays bounded.
class DroppedProcesses {
 public:
  // Adds the processes `snapshot` leaves out that the previous one did not; returns the total.
  std::uint64_t update(const Snapshot& snapshot, std::size_t max_processes);

 private:
  std::set<std::pair<unsigned, std::uint32_t>> previous_;
  std::uint64_t total_ = 0;
};

// The HTTP Content-Type for `format`.
std::string metrics_content_type(ExpositionFormat format);

// A label value escaped for the exposition: backslash, double quote and newline.
std::string escape_label_value(const std::string& value);

// A label value fit to publish: terminal_safe (invalid UTF-8 and control characters as visible
// escapes, core/terminal_safe.hpp), cut to `max_bytes` at a character boundary with "..." at the
// end. Not yet escaped.
std::string label_value(std::string_view raw, std::size_t max_bytes = kMaxLabelBytes);

}  // namespace vramdoc::watch
