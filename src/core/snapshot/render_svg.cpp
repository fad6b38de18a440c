#include "core/snapshot/render_svg.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::snapshot {

namespace {

std::string num(double v) { return fixed(v, 1); }

// One drawing of the segment map, `width` units wide, its labels in a column `label_width` wide.
std::string segment_map_svg(const Fragmentation& f, std::size_t rows, double width, double label_width, const char* cls) {
  constexpr double row_h = 14, gap = 4;
  const double bar = width - label_width - 8, h = double(rows) * (row_h + gap) + 8;
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' class='segments " + std::string(cls) + "' viewBox='0 0 " + num(width) + " " +
                    num(h) + "' width='100%' font-family='sans-serif' font-size='11'>\n";
  for (std::size_t r = 0; r < rows; ++r) {
    const SegmentRow& s = f.rows[r];
    const double y = 4 + double(r) * (row_h + gap);
    svg += "<text x='" + num(label_width - 6) + "' y='" + num(y + 11) + "' text-anchor='end'>" + format_bytes(s.total_bytes, 1) +
           (s.expandable ? " exp." : "") + "</text>";
    svg += "<rect class='mark' x='" + num(label_width) + "' y='" + num(y) + "' width='" + num(bar) + "' height='" + num(row_h) +
           "' fill='#f4f4f4' stroke='#999' stroke-width='0.5'><title>" + format_bytes(s.total_bytes) + " segment: " +
           format_bytes(s.allocated_bytes) + " allocated, " + format_bytes(s.free_bytes) + " free</title></rect>";
    // Runs of allocated bytes, merged to the unit: a run narrower than one still shows.
    const double per_unit = double(std::max<std::uint64_t>(s.total_bytes, 1)) / bar;
    double at = 0, run_start = -1;
    auto flush = [&](double end) {
      if (run_start < 0) return;
      const double x0 = label_width + run_start / per_unit, x1 = std::max(x0 + 0.6, label_width + end / per_unit);
      svg += "<rect x='" + num(x0) + "' y='" + num(y) + "' width='" + fixed(x1 - x0, 2) + "' height='" + num(row_h) + "' fill='#4e79a7'/>";
      run_start = -1;
    };
    for (const auto& [bytes, allocated] : s.layout) {
      const bool visible_gap = double(bytes) >= per_unit * 0.5;
      if (allocated && run_start < 0) run_start = at;
      if (!allocated && visible_gap) flush(at);
      at += double(bytes);
    }
    flush(at);
    svg += "\n";
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string band_colour(std::size_t k, std::size_t bands) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};
  if (k + 1 == bands) return "#bab0ac";
  return palette[k % (sizeof palette / sizeof palette[0])];
}

chart::Chart stacked_chart(const Chart& c, const std::optional<OomReport>& oom, const std::string& id) {
  chart::Chart out;
  out.id = id;
  out.x = {.quantity = chart::Quantity::Seconds, .title = "time since the recording began", .min = 0.0, .from_zero = false};
  out.y = {.quantity = chart::Quantity::Bytes, .title = "allocated (stacked by call site)"};
  if (c.t.empty() || c.bytes.empty()) {
    out.notes.push_back("No chart: the snapshot holds no trace for this device.");
    return out;
  }
  const std::size_t n = c.t.size(), bands = c.bytes.size();
  const double width = c.t.back() / double(n);  // each bucket ends at c.t[b]
  std::vector<double> top(n, 0);
  for (std::size_t k = 0; k < bands; ++k) {  // each band: its upper edge left to right, its lower edge back
    chart::Area a{.colour = band_colour(k, bands), .label = c.sites[k], .cls = "band"};
    for (std::size_t b = 0; b < n; ++b) {
      const double x0 = c.t[b] - width, x1 = c.t[b], low = top[b];
      top[b] += double(c.bytes[k][b]);
      a.upper.push_back({x0, top[b]}), a.upper.push_back({x1, top[b]});
      a.lower.push_back({x0, low}), a.lower.push_back({x1, low});
    }
    out.areas.push_back(std::move(a));
  }
  chart::Line reserved{.colour = "#222222", .label = "reserved (segments)", .cls = "reserved", .step = true, .dashed = true, .width = 1.2};
  for (std::size_t b = 0; b < n; ++b) reserved.points.push_back({c.t[b] - width, double(c.reserved[b])});
  reserved.points.push_back({c.t.back(), double(c.reserved.back())});
  out.lines.push_back(std::move(reserved));
  if (oom && oom->t_seconds) out.markers.push_back({.x = *oom->t_seconds, .colour = "#c0392b", .label = "out of memory", .cls = "oom"});
  return out;
}

std::string segment_map_html(const Fragmentation& f, std::size_t max_rows) {
  const std::size_t rows = std::min(max_rows, f.rows.size());
  if (rows == 0) return "<p>No segments.</p>\n";
  return "<div class='chart segment-map'>\n" + segment_map_svg(f, rows, 880, 150, "chart-wide") +
         segment_map_svg(f, rows, 400, 86, "chart-narrow") + "</div>\n";
}

}  // namespace vramdoc::snapshot
