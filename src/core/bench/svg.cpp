// The SVG page of a bench report: latency curve on the left, bandwidth per level on the right.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/bench/render.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::bench {

namespace {

constexpr double kPlotW = 460, kPlotH = 300, kLeft = 60, kTop = 40, kRow = 16, kLabelW = 280;

std::string num(double v) { return fixed(v, 1); }

std::string text_at(double x, double y, const std::string& s, const char* anchor = "start") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" + xml_escape(s) + "</text>\n";
}

// Latency in cycles over the footprint on a log2 axis.
std::string latency_plot(const std::vector<LatencyPoint>& curve) {
  std::string out = text_at(kLeft, kTop - 12, "Latency (cycles per dependent load) by footprint");
  out += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kPlotW) + "\" height=\"" +
         num(kPlotH) + "\" fill=\"none\" stroke=\"#888\"/>\n";
  if (curve.empty()) return out + text_at(kLeft + 20, kTop + 40, "not measured");
  const double x0 = std::log2(static_cast<double>(curve.front().footprint_bytes));
  const double x1 = std::max(x0 + 1, std::log2(static_cast<double>(curve.back().footprint_bytes)));
  double ymax = 1;
  for (const auto& p : curve) ymax = std::max(ymax, p.cycles);
  ymax *= 1.1;
  auto px = [&](std::uint64_t f) { return kLeft + (std::log2(static_cast<double>(f)) - x0) / (x1 - x0) * kPlotW; };
  auto py = [&](double c) { return kTop + kPlotH - c / ymax * kPlotH; };
  std::string path;
  for (const auto& p : curve) path += (path.empty() ? "M" : " L") + num(px(p.footprint_bytes)) + "," + num(py(p.cycles));
  out += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n";
  for (int e = static_cast<int>(std::ceil(x0)); e <= static_cast<int>(x1); e += 3) {
    const auto f = std::uint64_t{1} << e;
    out += text_at(px(f), kTop + kPlotH + 16, format_bytes(f, 0), "middle");
  }
  for (int i = 0; i <= 4; ++i) {
    const double c = ymax * i / 4;
    out += text_at(kLeft - 6, py(c) + 4, num(c).substr(0, num(c).find('.')), "end");
  }
  return out;
}

// The bandwidth measures that have a result: one bar each.
std::vector<const Measure*> bars_of(const std::vector<Measure>& measures) {
  std::vector<const Measure*> bars;
  for (const auto& m : measures) {
    if (m.unit == Unit::GBps && m.waived.empty() && m.error.empty() && m.result.median > 0) bars.push_back(&m);
  }
  return bars;
}

// One horizontal bar per bandwidth measure (GB/s, log scale: host links and L1 differ 500x).
std::string bandwidth_plot(const std::vector<Measure>& measures, double left) {
  const auto bars = bars_of(measures);
  std::string out = text_at(left, kTop - 12, "Bandwidth per level (GB/s, log scale)");
  if (bars.empty()) return out + text_at(left + 20, kTop + 40, "not measured");
  double vmax = 1;
  for (const auto* m : bars) vmax = std::max(vmax, m->result.median);
  const double lmax = std::log10(vmax * 1.5), lmin = 0;
  const double row = kRow, label_w = kLabelW, bar_w = kPlotW - 60;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& m = *bars[i];
    const double y = kTop + row * static_cast<double>(i);
    const double w = std::max(1.0, (std::log10(m.result.median) - lmin) / (lmax - lmin) * bar_w);
    out += text_at(left + label_w - 6, y + row * 0.7, m.level + " " + m.name, "end");
    out += "<rect x=\"" + num(left + label_w) + "\" y=\"" + num(y + 2) + "\" width=\"" + num(w) + "\" height=\"" +
           num(row - 4) + "\" fill=\"#2ca02c\"/>\n";
    out += text_at(left + label_w + w + 4, y + row * 0.7, num(m.result.median));
  }
  return out;
}

}  // namespace

std::string render_svg(const BenchReport& report) {
  const double rows = static_cast<double>(bars_of(report.measures).size());
  const double width = kLeft + kPlotW + 60 + kLabelW + kPlotW, height = kTop + std::max(kPlotH, rows * kRow) + 60;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += text_at(kLeft, 16, "vramdoc bench: " + report.device_name);
  out += latency_plot(report.latency);
  out += bandwidth_plot(report.measures, kLeft + kPlotW + 60);
  return out + "</svg>\n";
}

}  // namespace vramdoc::bench
