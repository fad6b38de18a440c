// The Prometheus text exposition (0.0.4) and OpenMetrics 1.0 of one snapshot: the metrics
// `vramdoc watch --serve` answers /metrics with. A value the device does not report is left
// out (no sample line), never written as 0.
#pragma once
#include <string>

#include "core/watch/model.hpp"

namespace vramdoc::watch {

enum class ExpositionFormat {
  Prometheus,   // text/plain; version=0.0.4
  OpenMetrics,  // application/openmetrics-text; version=1.0.0 (ends with "# EOF")
};

// The exposition: HELP and TYPE lines, then one sample per GPU (labels gpu, uuid) or per
// process (gpu, uuid, pid). Metric names and meanings are listed in docs/watch.md.
std::string render_metrics(const Snapshot& snapshot, ExpositionFormat format = ExpositionFormat::Prometheus);

// The HTTP Content-Type for `format`.
std::string metrics_content_type(ExpositionFormat format);

// A label value escaped for the exposition: backslash, double quote and newline.
std::string escape_label_value(const std::string& value);

}  // namespace vramdoc::watch
