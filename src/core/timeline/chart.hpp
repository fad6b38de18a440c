// A diagnosis as a chart (core/chart): the readings, the step-end bytes the verdict rests on with
// the trend fitted over them, the warm-up, the step ends, the card's capacity, the OOM and, for a
// leak, where the trend runs out of memory. Drawn by the HTML report, one chart per process.
#pragma once
#include <optional>
#include <string>

#include "core/chart/svg.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/traced.hpp"

namespace vramdoc::timeline {

struct ChartOptions {
  std::string id = "timeline";
  std::string title;
  const TracedSeries* traced = nullptr;  // the allocation tracer's bytes, drawn as a staircase
  std::optional<double> x_min, x_max;    // a common time range (several processes' charts)
  std::optional<double> y_max;           // a common memory range
};

chart::Chart diagnosis_chart(const Diagnosis& d, const ChartOptions& options = {});
// A leak whose projected OOM lies beyond the recording's chart (more than 3 recordings ahead):
// the readings and the projection up to the card's capacity, on a time axis that reaches it.
std::optional<chart::Chart> projection_chart(const Diagnosis& d, const ChartOptions& options = {});

}  // namespace vramdoc::timeline
