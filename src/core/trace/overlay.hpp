// The traced-bytes timeline of a trace directory, put on a driver timeline's clock (issue 6):
// the series the reports draw beside the driver's numbers, and its text and JSON sections.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/timeline/timeline.hpp"
#include "core/timeline/traced.hpp"
#include "core/trace/report.hpp"

namespace vramdoc::trace {

inline constexpr std::size_t kOverlayPoints = 500;
inline constexpr std::size_t kOverlaySites = 5;

// The offset (seconds) to add to a trace time (seconds since the earliest trace started) to put it
// on the timeline's clock. With `recording_start_unix_ns` (known to `run`) both clocks share the
// wall clock: exact to the clocks' resolution. Without it: the first traced allocation is taken
// to happen when the driver's number first rises above its first sample (error: about one
// sampling interval plus the time from context creation to the first allocation).
double trace_offset_seconds(const timeline::Timeline& tl, const std::vector<TimelinePoint>& merged,
                            std::optional<std::uint64_t> recording_start_unix_ns,
                            std::uint64_t trace_start_unix_ns);

// Sums the processes' traced bytes on one clock (seconds since the earliest start_unix_ns), as a
// step function, keeping the largest value per bucket: at most max_points >= 2 points.
std::vector<TimelinePoint> merge_processes(const std::vector<ProcessTrace>& processes, std::size_t max_points);

// The overlay: merged, aligned to `tl`, with peak, live-at-end, PyTorch and the top call sites.
timeline::TracedSeries build_overlay(const std::vector<ProcessTrace>& processes, const timeline::Timeline& tl,
                                     std::optional<std::uint64_t> recording_start_unix_ns = std::nullopt,
                                     std::size_t max_points = kOverlayPoints, std::size_t max_sites = kOverlaySites);

// A few lines for the text report: traced peak vs driver peak, live at the end, top call sites.
std::string render_overlay_text(const timeline::TracedSeries& s, const timeline::Timeline& tl);
// The "trace" object of analyze's JSON: peak_bytes, live_bytes_at_end, timeline [[t, bytes]...], top_call_sites.
nlohmann::json overlay_json(const timeline::TracedSeries& s);

}  // namespace vramdoc::trace
