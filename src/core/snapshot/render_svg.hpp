// The pictures of a snapshot's HTML page: allocated bytes over time stacked by call site (a
// core/chart figure), and the segment map. Both are drawn at screen resolution (a few polygons and
// runs, however many allocations and blocks), so a page from a 1 GB snapshot stays light; each
// comes as a wide and a narrow drawing (core/chart's CSS shows the one that fits).
#pragma once
#include <string>

#include "core/chart/svg.hpp"
#include "core/snapshot/analysis.hpp"

namespace vramdoc::snapshot {

// The colour of band k of the stacked chart (the last band, "other", is grey).
std::string band_colour(std::size_t k, std::size_t bands);
// Allocated bytes stacked by the top call sites, the reserved bytes as a line, the OOM marked.
chart::Chart stacked_chart(const Chart& c, const std::optional<OomReport>& oom, const std::string& id);
// One row per segment (largest first, at most `max_rows`), its blocks allocated or free: a
// figure with a wide and a narrow drawing.
std::string segment_map_html(const Fragmentation& f, std::size_t max_rows);

}  // namespace vramdoc::snapshot
