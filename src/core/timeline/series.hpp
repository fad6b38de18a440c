// The series the classifier reads from a timeline: per-step floors, time-binned floors, the
// warm-up (when the signal first levels off), the level changes after it, and their trend.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// Points in order; x is a step index or seconds, t is always seconds.
struct Series {
  std::string what;  // how it was made, for the evidence
  bool x_is_steps = false;
  std::vector<double> x, t, y;
  std::size_t grouped = 1;  // the points merged into each (bounded(): a long job's steps); 1: none
};

// Whether the recording left out ticks that changed nothing (version 2, docs/timeline-format.md):
// its sampling interval is known and its samples are well under its ticks.
bool has_left_out_ticks(const Timeline& tl);

// The most points of a regular grid (below): the period search is quadratic in them.
inline constexpr std::size_t kMaxGridPoints = 16384;
// What all the grids of one job's processes may hold together: a job of 4,096 processes gets
// 1,024 points each (judge_processes), so that judging it stays bounded.
inline constexpr std::size_t kJobGridPoints = std::size_t{1} << 22;
inline constexpr std::size_t kMinGridPoints = 512;

// The samples on a regular grid, the recording's interval (coarser when that would give more than
// `max_points`), each the last reading at or before its time: what every tick showed. The rules
// that count samples or bins, or look for a period, read this instead of the lines of the file.
std::vector<Sample> regular_samples(const Timeline& tl, std::size_t max_points = kMaxGridPoints);

// Step ends, in time order, from "step N" marks (our run writes these from --step-regex and the
// marker file). Empty when the timeline has none.
std::vector<double> step_end_times(const Timeline& tl);

// Bytes the framework still holds at each step end: from the marks' allocated figures, or the
// minimum of the allocated column within each step. Empty when neither exists.
Series retained_per_step(const Timeline& tl, const std::vector<double>& step_ends);

// The driver's number (process_used): per-step minima when steps are known, otherwise minima
// over at most `max_bins` equal time bins.
Series driver_floors(const Timeline& tl, const std::vector<double>& step_ends, std::size_t max_bins = 240);

// The most points of a series the trend is measured on (Theil-Sen and Mann-Kendall are quadratic).
inline constexpr std::size_t kMaxSeriesPoints = 2048;

// `s` with at most `max_points` points: beyond, consecutive groups of equal size (in x) merged
// into their lowest point (its x, t and y), a floor as every series here is.
Series bounded(Series s, std::size_t max_points = kMaxSeriesPoints);

// Level changes larger than a tolerance, and where the signal first settles.
struct Levels {
  double tolerance = 0;
  std::vector<std::size_t> rises;        // indices where the level went up
  std::vector<double> rise_bytes;        // by how much
  std::vector<std::size_t> drops;        // indices where it fell by a tenth or more
  std::size_t flushes = 0;               // drops later followed by a rise again (a cache given back)
  std::optional<std::size_t> settled_at; // first index after which it stayed level long enough
  std::size_t warmup_end = 0;            // settled_at; when it never settles, the last rise in the first
                                         // half far above the typical rise, and at least a tenth
};

// A level change is larger than `tolerance`; a level reached by a change (the starting level, before
// the job's first step, does not count) is settled when it then holds for at least
// as long as it took to reach it and at least `min_quiet` (x units): first steps are slow (CUDA
// context, autotuning, lazy optimizer state), so a short quiet spell is not yet a steady state.
Levels find_levels(const Series& s, double tolerance, double min_quiet);

// Trend of y against x over points [from, end): Theil-Sen slope (y per x) and Mann-Kendall z.
struct Trend {
  std::optional<double> slope;
  double mk_z = 0;
  std::size_t points = 0;
  double span = 0;  // x range covered
};
Trend trend_after(const Series& s, std::size_t from);

}  // namespace vramdoc::timeline
