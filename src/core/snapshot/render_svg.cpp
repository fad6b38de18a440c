#include "core/snapshot/render_svg.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::snapshot {

namespace {

constexpr double kW = 900, kH = 340, kLeft = 70, kRight = 20, kTop = 16, kBottom = 36;

std::string num(double v) { return fixed(v, 1); }

struct Scale {
  double t1, y1;
  double x(double t) const { return kLeft + t / std::max(t1, 1e-9) * (kW - kLeft - kRight); }
  double y(double bytes) const { return kH - kBottom - bytes / std::max(y1, 1.0) * (kH - kTop - kBottom); }
};

std::string axes(const Scale& sc) {
  std::string s;
  // Enough decimals that the five time ticks differ (a recording may last milliseconds).
  const int decimals = sc.t1 > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(sc.t1 / 4))), 0, 6) : 2;
  for (int k = 0; k <= 4; ++k) {
    const double b = sc.y1 * k / 4, y = sc.y(b), t = sc.t1 * k / 4;
    s += "<line x1='" + num(kLeft) + "' x2='" + num(kW - kRight) + "' y1='" + num(y) + "' y2='" + num(y) + "' stroke='#eee'/>";
    s += "<text x='" + num(kLeft - 6) + "' y='" + num(y + 4) + "' text-anchor='end'>" + format_bytes(std::uint64_t(b), 1) + "</text>";
    s += "<text x='" + num(sc.x(t)) + "' y='" + num(kH - kBottom + 16) + "' text-anchor='middle'>" + fixed(t, decimals) + " s</text>\n";
  }
  s += "<line x1='" + num(kLeft) + "' x2='" + num(kLeft) + "' y1='" + num(kTop) + "' y2='" + num(kH - kBottom) + "' stroke='#333'/>";
  s += "<line x1='" + num(kLeft) + "' x2='" + num(kW - kRight) + "' y1='" + num(kH - kBottom) + "' y2='" + num(kH - kBottom) + "' stroke='#333'/>\n";
  return s;
}

}  // namespace

std::string band_colour(std::size_t k, std::size_t bands) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};
  if (k + 1 == bands) return "#bab0ac";
  return palette[k % (sizeof palette / sizeof palette[0])];
}

std::string stacked_chart_svg(const Chart& c, const std::optional<OomReport>& oom) {
  if (c.t.empty() || c.bytes.empty()) return "<p>No chart: the snapshot holds no trace for this device.</p>\n";
  const std::size_t n = c.t.size(), bands = c.bytes.size();
  std::vector<double> top(n, 0);
  Scale sc{c.t.back(), 1};
  for (std::size_t b = 0; b < n; ++b) {
    double sum = 0;
    for (std::size_t k = 0; k < bands; ++k) sum += double(c.bytes[k][b]);
    sc.y1 = std::max({sc.y1, sum, double(c.reserved[b])});
  }
  sc.y1 *= 1.05;
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' class='stacked' width='" + num(kW) + "' height='" + num(kH) +
                    "' viewBox='0 0 " + num(kW) + " " + num(kH) + "' font-family='sans-serif' font-size='11'>\n"
                    "<rect width='100%' height='100%' fill='white'/>\n" + axes(sc);
  const double step = (sc.x(sc.t1) - sc.x(0)) / double(n);
  for (std::size_t k = 0; k < bands; ++k) {  // each band: its upper edge left to right, its lower edge back
    std::string upper, lower;
    for (std::size_t b = 0; b < n; ++b) {
      const double x0 = kLeft + step * double(b), x1 = x0 + step;
      const double y_low = sc.y(top[b]);
      top[b] += double(c.bytes[k][b]);
      const double y_high = sc.y(top[b]);
      upper += num(x0) + "," + num(y_high) + " " + num(x1) + "," + num(y_high) + " ";
      lower = num(x1) + "," + num(y_low) + " " + num(x0) + "," + num(y_low) + " " + lower;
    }
    svg += "<polygon class='band' fill='" + band_colour(k, bands) + "' stroke='none' points='" + upper + lower + "'><title>" +
           xml_escape(c.sites[k]) + "</title></polygon>\n";
  }
  std::string reserved;
  for (std::size_t b = 0; b < n; ++b) {
    const double x0 = kLeft + step * double(b), y = sc.y(double(c.reserved[b]));
    reserved += num(x0) + "," + num(y) + " " + num(x0 + step) + "," + num(y) + " ";
  }
  svg += "<polyline fill='none' stroke='#222' stroke-width='1.2' stroke-dasharray='4,3' points='" + reserved + "'><title>reserved (segments)</title></polyline>\n";
  if (oom && oom->t_seconds) {
    const double x = sc.x(*oom->t_seconds);
    svg += "<line x1='" + num(x) + "' x2='" + num(x) + "' y1='" + num(kTop) + "' y2='" + num(kH - kBottom) + "' stroke='#c00' stroke-width='2'/>"
           "<text x='" + num(x - 4) + "' y='" + num(kTop + 12) + "' text-anchor='end' fill='#c00'>OOM</text>\n";
  }
  return svg + "</svg>\n";
}

std::string segment_map_svg(const Fragmentation& f, std::size_t max_rows) {
  const std::size_t rows = std::min(max_rows, f.rows.size());
  if (rows == 0) return "<p>No segments.</p>\n";
  constexpr double left = 150, width = 720, row_h = 14, gap = 4;
  const double h = double(rows) * (row_h + gap) + 8;
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' class='segments' width='" + num(left + width + 10) + "' height='" + num(h) +
                    "' font-family='sans-serif' font-size='10'>\n";
  for (std::size_t r = 0; r < rows; ++r) {
    const SegmentRow& s = f.rows[r];
    const double y = 4 + double(r) * (row_h + gap);
    svg += "<text x='" + num(left - 6) + "' y='" + num(y + 10) + "' text-anchor='end'>" + format_bytes(s.total_bytes, 1) +
           (s.expandable ? " exp." : "") + "</text>";
    svg += "<rect x='" + num(left) + "' y='" + num(y) + "' width='" + num(width) + "' height='" + num(row_h) +
           "' fill='#f4f4f4' stroke='#999' stroke-width='0.5'><title>" + format_bytes(s.total_bytes) + " segment: " +
           format_bytes(s.allocated_bytes) + " allocated, " + format_bytes(s.free_bytes) + " free</title></rect>";
    // Runs of allocated bytes, merged to the pixel: a run narrower than a pixel still shows.
    const double per_px = double(std::max<std::uint64_t>(s.total_bytes, 1)) / width;
    double at = 0, run_start = -1;
    auto flush = [&](double end) {
      if (run_start < 0) return;
      const double x0 = left + run_start / per_px, x1 = std::max(x0 + 0.6, left + end / per_px);
      svg += "<rect x='" + num(x0) + "' y='" + num(y) + "' width='" + fixed(x1 - x0, 2) + "' height='" + num(row_h) + "' fill='#4e79a7'/>";
      run_start = -1;
    };
    for (const auto& [bytes, allocated] : s.layout) {
      const bool visible_gap = double(bytes) >= per_px * 0.5;
      if (allocated && run_start < 0) run_start = at;
      if (!allocated && visible_gap) flush(at);
      at += double(bytes);
    }
    flush(at);
    svg += "\n";
  }
  return svg + "</svg>\n";
}

}  // namespace vramdoc::snapshot
