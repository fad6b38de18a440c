#include "core/chart/svg.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"

namespace vramdoc::chart {

const char* const kChartCss =
    ".chart{margin:12px 0 18px}.chart h3{margin:0 0 4px;font-size:15px}"
    ".chart svg{display:block;width:100%;height:auto}.chart svg.chart-narrow{display:none}"
    "@media (max-width:720px){.chart svg.chart-wide{display:none}.chart svg.chart-narrow{display:block}}"
    ".chart .legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:13px;margin:2px 0 4px;padding:0}"
    ".chart .legend span{min-width:0}"
    ".chart .legend i{display:inline-block;width:18px;height:0;border-top:2px solid;vertical-align:middle;margin-right:5px}"
    ".chart .legend i.dash{border-top-style:dashed}.chart .legend i.dot{width:8px;height:8px;border:0;border-radius:50%}"
    ".chart .legend i.box{height:10px;border:0}.chart .legend i.tick{width:0;height:10px;border:0;border-left:1px solid}"
    ".chart .notes{font-size:13px;color:#555;margin:2px 0}";

namespace {

std::string n1(double v) { return fixed(v, 1); }
std::string esc(const std::string& s) { return xml_escape(s); }

// Where the data lies, raw units.
struct Extent {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

struct Frame {
  Layout l;
  double left = 0, right = 0, top = 0, bottom = 0;  // the plot area, SVG units
  Unit xu, yu;
  Ticks xt, yt;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // the domain, raw units
  double X(double x) const { return left + (x - x0) / (x1 - x0) * (right - left); }
  double Y(double y) const { return bottom - (y - y0) / (y1 - y0) * (bottom - top); }
  double plot_width() const { return right - left; }
};

Extent x_extent(const Chart& c) {
  Extent e;
  for (const auto& l : c.lines) for (const auto& p : l.points) e.add(p.x);
  for (const auto& d : c.dots) for (const auto& p : d.points) e.add(p.x);
  for (const auto& a : c.areas) for (const auto& p : a.upper) e.add(p.x);
  for (const auto& b : c.bands) e.add(b.x0), e.add(b.x1);
  for (const auto& m : c.markers) e.add(m.x);
  if (c.x.min) e.add(*c.x.min);
  if (c.x.max) e.add(*c.x.max);
  if (c.x.from_zero && c.x.quantity != Quantity::Seconds) e.add(0);
  return e;
}

Extent y_extent(const Chart& c) {
  Extent e;
  for (const auto& l : c.lines) for (const auto& p : l.points) e.add(p.y);
  for (const auto& d : c.dots) for (const auto& p : d.points) e.add(p.y);
  for (const auto& a : c.areas) for (const auto& p : a.upper) e.add(p.y);
  for (const auto& r : c.rules) e.add(r.y);
  if (c.y.min) e.add(*c.y.min);
  if (c.y.max) e.add(*c.y.max);
  if (c.y.from_zero) e.add(0);
  return e;
}

Frame frame(const Chart& c, const Layout& l) {
  Frame f;
  f.l = l;
  Extent xe = x_extent(c), ye = y_extent(c);
  if (xe.empty()) xe.add(0), xe.add(1);
  if (ye.empty()) ye.add(0), ye.add(1);
  // A time axis that begins within the first twentieth of its span begins at 0: "0" is a tick.
  if (c.x.quantity == Quantity::Seconds && xe.lo > 0 && xe.lo <= 0.05 * (xe.hi - xe.lo)) xe.lo = 0;
  f.xu = unit_for(c.x.quantity, std::max(std::abs(xe.lo), std::abs(xe.hi)));
  f.yu = unit_for(c.y.quantity, std::max(std::abs(ye.lo), std::abs(ye.hi)));
  f.xt = round_ticks(xe.lo / f.xu.scale, xe.hi / f.xu.scale, l.x_ticks);
  f.yt = round_ticks(ye.lo / f.yu.scale, ye.hi / f.yu.scale, l.y_ticks);
  if (c.x.quantity == Quantity::Seconds) {  // time spans the data: round ticks inside it, none beyond
    f.x0 = xe.lo, f.x1 = xe.hi;
    std::erase_if(f.xt.values, [&](double v) { return v * f.xu.scale < f.x0 - 1e-9 * (f.x1 - f.x0) || v * f.xu.scale > f.x1 + 1e-9 * (f.x1 - f.x0); });
  } else {
    f.x0 = f.xt.values.front() * f.xu.scale, f.x1 = f.xt.values.back() * f.xu.scale;
  }
  f.y0 = f.yt.values.front() * f.yu.scale, f.y1 = f.yt.values.back() * f.yu.scale;
  if (f.x1 <= f.x0) f.x1 = f.x0 + 1;
  if (f.y1 <= f.y0) f.y1 = f.y0 + 1;
  std::size_t widest = 1;  // the longest y label sets the left margin
  for (double v : f.yt.values) widest = std::max(widest, tick_label(v, f.yt.step).size());
  f.left = l.font * (1.2 + 0.62 * static_cast<double>(widest));
  f.right = l.width - l.font * 1.5;
  f.top = l.font * 2.4;
  f.bottom = l.height - l.font * 3.4;
  return f;
}

std::string text(double x, double y, const std::string& s, const char* anchor, const char* extra = "") {
  return "<text x=\"" + n1(x) + "\" y=\"" + n1(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + esc(s) + "</text>";
}

std::string axes(const Chart& c, const Frame& f) {
  std::string s;
  for (double v : f.yt.values) {
    if (!c.y.ticks) break;
    const double y = f.Y(v * f.yu.scale);
    s += "<line x1=\"" + n1(f.left) + "\" x2=\"" + n1(f.right) + "\" y1=\"" + n1(y) + "\" y2=\"" + n1(y) + "\" stroke=\"#e6e6e6\"/>";
    s += text(f.left - f.l.font * 0.4, y + f.l.font * 0.35, tick_label(v, f.yt.step), "end") + "\n";
  }
  for (double v : f.xt.values) {
    const double x = f.X(v * f.xu.scale);
    s += "<line x1=\"" + n1(x) + "\" x2=\"" + n1(x) + "\" y1=\"" + n1(f.bottom) + "\" y2=\"" + n1(f.bottom + 4) + "\" stroke=\"#333\"/>";
    s += text(x, f.bottom + f.l.font * 1.25, tick_label(v, f.xt.step), "middle") + "\n";
  }
  s += "<line x1=\"" + n1(f.left) + "\" x2=\"" + n1(f.left) + "\" y1=\"" + n1(f.top) + "\" y2=\"" + n1(f.bottom) + "\" stroke=\"#333\"/>";
  s += "<line x1=\"" + n1(f.left) + "\" x2=\"" + n1(f.right) + "\" y1=\"" + n1(f.bottom) + "\" y2=\"" + n1(f.bottom) + "\" stroke=\"#333\"/>\n";
  auto titled = [](const Axis& a, const Unit& u) { return u.name.empty() || !a.ticks ? a.title : a.title + " (" + u.name + ")"; };
  s += text(f.left - f.l.font * 0.4, f.l.font * 1.1, titled(c.y, f.yu), "start", " class=\"axis-title\" font-weight=\"bold\"") + "\n";
  s += text((f.left + f.right) / 2, f.l.height - f.l.font * 0.45, titled(c.x, f.xu), "middle", " class=\"axis-title\" font-weight=\"bold\"") + "\n";
  return s;
}

std::string points_attr(const std::vector<Point>& pts, const Frame& f) {
  std::string s;
  for (const auto& p : pts) s += n1(f.X(p.x)) + "," + n1(f.Y(p.y)) + " ";
  if (!s.empty()) s.pop_back();
  return s;
}

std::string line_svg(const Line& l, const Frame& f) {
  if (l.points.empty()) return "";
  std::vector<Point> pts = reduce(l.points, static_cast<std::size_t>(f.plot_width()));
  if (l.step) {
    std::vector<Point> stairs;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (i > 0) stairs.push_back({pts[i].x, pts[i - 1].y});
      stairs.push_back(pts[i]);
    }
    pts = std::move(stairs);
  }
  if (pts.size() == 1) pts.push_back(pts.front());  // one reading still shows as a dot-sized line
  return "<polyline class=\"mark " + esc(l.cls) + "\" fill=\"none\" stroke=\"" + l.colour + "\" stroke-width=\"" + n1(l.width) +
         "\" stroke-linejoin=\"round\" stroke-linecap=\"round\"" + (l.dashed ? " stroke-dasharray=\"7,4\"" : "") + " points=\"" +
         points_attr(pts, f) + "\"><title>" + esc(l.label) + "</title></polyline>\n";
}

std::string dots_svg(const Dots& d, const Frame& f) {
  if (d.points.empty()) return "";
  const bool reduced = d.points.size() > 2 * static_cast<std::size_t>(f.plot_width()) + 2;
  const std::vector<Point> pts = reduced ? reduce(d.points, static_cast<std::size_t>(f.plot_width() / 2)) : d.points;
  std::string s = "<g class=\"mark " + esc(d.cls) + "\" fill=\"" + d.colour + "\">";
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const std::string tip = !reduced && i < d.tips.size() ? d.tips[i] : d.label;
    s += "<circle cx=\"" + n1(f.X(pts[i].x)) + "\" cy=\"" + n1(f.Y(pts[i].y)) + "\" r=\"" + n1(d.radius) + "\"><title>" + esc(tip) + "</title></circle>";
  }
  return s + "</g>\n";
}

std::string clamp_band(const Band& b, const Frame& f) {
  const double x0 = std::clamp(f.X(b.x0), f.left, f.right), x1 = std::clamp(f.X(b.x1), f.left, f.right);
  if (x1 - x0 < 0.5) return "";
  return "<rect class=\"" + esc(b.cls) + "\" x=\"" + n1(x0) + "\" y=\"" + n1(f.top) + "\" width=\"" + n1(x1 - x0) + "\" height=\"" +
         n1(f.bottom - f.top) + "\" fill=\"" + b.colour + "\"><title>" + esc(b.label) + "</title></rect>\n";
}

std::string area_svg(const Area& a, const Frame& f) {
  if (a.upper.empty()) return "";
  std::vector<Point> edge = a.upper;
  edge.insert(edge.end(), a.lower.rbegin(), a.lower.rend());
  return "<polygon class=\"mark " + esc(a.cls) + "\" fill=\"" + a.colour + "\" stroke=\"none\" points=\"" + points_attr(edge, f) +
         "\"><title>" + esc(a.label) + "</title></polygon>\n";
}

// A rule's label sits at the plot's left end, above the line (the markers' labels are at the
// bottom: the two never meet).
std::string rule_svg(const Rule& r, const Frame& f) {
  const double y = f.Y(r.y);
  return "<g class=\"" + esc(r.cls) + "\"><line x1=\"" + n1(f.left) + "\" x2=\"" + n1(f.right) + "\" y1=\"" + n1(y) + "\" y2=\"" + n1(y) +
         "\" stroke=\"" + r.colour + "\" stroke-width=\"1.5\" stroke-dasharray=\"5,4\"><title>" + esc(r.label) + "</title></line>" +
         text(f.left + 4, y - 4, r.label, "start", (" fill=\"" + r.colour + "\"").c_str()) + "</g>\n";
}

std::string marker_svg(const Marker& m, const Frame& f, std::size_t k) {
  const double x = f.X(m.x);
  const bool right_half = x > (f.left + f.right) / 2;
  const double y = f.bottom - 10 - f.l.font * 1.2 * static_cast<double>(k);  // above the step ticks, stacked
  return "<g class=\"" + esc(m.cls) + "\"><line x1=\"" + n1(x) + "\" x2=\"" + n1(x) + "\" y1=\"" + n1(f.top) + "\" y2=\"" + n1(f.bottom) +
         "\" stroke=\"" + m.colour + "\" stroke-width=\"2\"" + (m.dashed ? " stroke-dasharray=\"4,3\"" : "") + "><title>" + esc(m.label) +
         "</title></line>" + text(right_half ? x - 5 : x + 5, y, m.tag.empty() ? m.label : m.tag, right_half ? "end" : "start",
                                  (" fill=\"" + m.colour + "\" font-weight=\"bold\"").c_str()) + "</g>\n";
}

std::string x_ticks_svg(const Chart& c, const Frame& f) {
  if (c.ticks_x.empty()) return "";
  const std::size_t every = std::max<std::size_t>(1, c.ticks_x.size() / 300);
  std::string s = "<g class=\"steps\" stroke=\"#888\">";
  for (std::size_t i = 0; i < c.ticks_x.size(); i += every) {
    const double x = f.X(c.ticks_x[i]);
    s += "<line x1=\"" + n1(x) + "\" x2=\"" + n1(x) + "\" y1=\"" + n1(f.bottom) + "\" y2=\"" + n1(f.bottom - 7) + "\"/>";
  }
  return s + "</g>\n";
}

std::string legend(const Chart& c) {
  std::string h;
  auto item = [&](const std::string& swatch, const std::string& label) {
    if (!label.empty()) h += "<span>" + swatch + esc(label) + "</span>";
  };
  for (const auto& a : c.areas) item("<i class=\"box\" style=\"background:" + a.colour + "\"></i>", a.label);
  for (const auto& l : c.lines) item(std::string("<i class=\"") + (l.dashed ? "dash" : "") + "\" style=\"border-color:" + l.colour + "\"></i>", l.label);
  for (const auto& d : c.dots) item("<i class=\"dot\" style=\"background:" + d.colour + "\"></i>", d.label);
  for (const auto& b : c.bands) item("<i class=\"box\" style=\"background:" + b.colour + "\"></i>", b.label);
  for (const auto& r : c.rules) item("<i class=\"dash\" style=\"border-color:" + r.colour + "\"></i>", r.label);
  for (const auto& m : c.markers) item("<i class=\"tick\" style=\"border-color:" + m.colour + "\"></i>", m.label);
  if (!c.ticks_x.empty()) item("<i class=\"tick\" style=\"border-color:#888\"></i>", c.ticks_label);
  return h.empty() ? "" : "<p class=\"legend\">" + h + "</p>\n";
}

}  // namespace

std::string render_svg(const Chart& c, const Layout& layout) {
  const Frame f = frame(c, layout);
  const char* cls = layout.width < 600 ? "chart-narrow" : "chart-wide";
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"" + std::string(cls) + "\" id=\"" + esc(c.id) + "-" + cls +
                  "\" viewBox=\"0 0 " + n1(layout.width) + " " + n1(layout.height) + "\" width=\"100%\" preserveAspectRatio=\"xMidYMid meet\"" +
                  " role=\"img\" aria-label=\"" + esc(c.title) + "\" font-family=\"sans-serif\" font-size=\"" + n1(layout.font) + "\">\n";
  s += "<rect width=\"" + n1(layout.width) + "\" height=\"" + n1(layout.height) + "\" fill=\"white\"/>\n";
  for (const auto& b : c.bands) s += clamp_band(b, f);
  s += axes(c, f);
  s += "<svg x=\"" + n1(f.left) + "\" y=\"" + n1(f.top - 6) + "\" width=\"" + n1(f.right - f.left) + "\" height=\"" + n1(f.bottom - f.top + 6) +
       "\" viewBox=\"" + n1(f.left) + " " + n1(f.top - 6) + " " + n1(f.right - f.left) + " " + n1(f.bottom - f.top + 6) + "\" overflow=\"hidden\">\n";
  for (const auto& a : c.areas) s += area_svg(a, f);
  for (const auto& l : c.lines)
    if (!l.on_top) s += line_svg(l, f);
  for (const auto& d : c.dots) s += dots_svg(d, f);
  for (const auto& l : c.lines)
    if (l.on_top) s += line_svg(l, f);
  s += "</svg>\n";
  s += x_ticks_svg(c, f);
  for (const auto& r : c.rules) s += rule_svg(r, f);
  for (std::size_t k = 0; k < c.markers.size(); ++k) s += marker_svg(c.markers[k], f, k);
  return s + "</svg>\n";
}

std::string render_figure(const Chart& c) {
  std::string h = "<figure class=\"chart\" id=\"" + esc(c.id) + "\">\n";
  if (!c.title.empty()) h += "<h3>" + esc(c.title) + "</h3>\n";
  h += legend(c) + render_svg(c, kWide) + render_svg(c, kNarrow);
  for (const auto& n : c.notes) h += "<p class=\"notes\">" + esc(n) + "</p>\n";
  return h + "</figure>\n";
}

}  // namespace vramdoc::chart
