// The verdict on a timeline and the evidence behind it. Unknown figures stay empty, never 0.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/oom_message.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

enum class Verdict { Leak, Insufficient, Fragmentation, Plateau, Stable, Inconclusive };
// "leak", "insufficient", "fragmentation", "plateau", "stable", "inconclusive".
const char* verdict_name(Verdict v);

struct Evidence {
  std::size_t samples = 0;
  double duration_seconds = 0;
  std::string trend_series;                 // which series the trend was measured on
  std::optional<std::size_t> steps;         // step marks seen
  std::optional<double> step_seconds;       // mean step time: marks, or a period found in the signal
  std::string step_source;                  // "marks", "period found in the signal", "none"
  double warmup_seconds = 0;                // from the start of the recording
  std::optional<std::size_t> warmup_steps;
  bool settled = false;                     // whether the signal levelled off after warm-up
  std::optional<double> growth_bytes_per_step;    // Theil-Sen, after warm-up
  std::optional<double> growth_bytes_per_second;
  std::string growth_method;                // "Theil-Sen", or "late rises over the time after warm-up"
  std::optional<double> mann_kendall_z;           // > 3.09: increasing at p < 0.001
  std::size_t trend_points = 0;
  std::size_t late_rises = 0;               // the driver's number went up after warm-up, this often
  double late_rise_bytes = 0;
  std::size_t large_late_rises = 0;         // of those, how many were a third of the working set or more
  double working_set_bytes = 0;             // the rise during warm-up
  std::size_t cache_flushes = 0;            // the driver's number fell and grew again
  std::uint64_t first_bytes = 0, peak_bytes = 0, last_bytes = 0;  // the driver's per-process number
  double peak_seconds = 0;
  std::optional<std::uint64_t> capacity_bytes;
  std::optional<double> peak_fraction;      // peak / capacity
  std::optional<double> oom_seconds;        // when it ran out
  std::optional<OomMessage> oom;
  std::optional<double> projected_oom_seconds;  // leak: when it would run out, from the start
  std::optional<double> projected_oom_step;
  std::optional<std::uint64_t> missing_bytes;   // insufficient: requested - free
};

// A straight line over the time axis, for the chart: the fitted trend after warm-up.
struct TrendLine {
  double t0 = 0, t1 = 0, y0 = 0, y1 = 0;
};

struct Diagnosis {
  Verdict verdict = Verdict::Inconclusive;
  std::string summary;               // one sentence
  std::vector<std::string> reasons;  // how the verdict was reached, one line each
  std::vector<std::string> remedies; // from the articles, matched to the verdict
  std::string to_settle;             // inconclusive: what would settle it
  Evidence evidence;
  std::optional<TrendLine> trend;
  std::vector<double> step_ends;     // seconds, for the chart
};

}  // namespace vramdoc::timeline
