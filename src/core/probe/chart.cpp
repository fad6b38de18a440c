// The SVG chart of peak memory against the probed value (render_svg in report.hpp).
#include <algorithm>
#include <cstdio>

#include "core/probe/report.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::probe {

namespace {

constexpr double kW = 640, kH = 360, kLeft = 70, kRight = 20, kTop = 20, kBottom = 50;

std::string f1(double v) { return fixed(v, 1); }

}  // namespace

std::string render_svg(const ProbeReport& r) {
  double xmax = 1, ymax = 1;
  for (const auto& t : r.trials) {
    xmax = std::max(xmax, static_cast<double>(t.value));
    if (t.peak_bytes) ymax = std::max(ymax, static_cast<double>(*t.peak_bytes));
  }
  if (r.capacity_bytes) ymax = std::max(ymax, static_cast<double>(*r.capacity_bytes));
  ymax *= 1.05;
  xmax *= 1.05;
  auto X = [&](double v) { return kLeft + v / xmax * (kW - kLeft - kRight); };
  auto Y = [&](double b) { return kH - kBottom - b / ymax * (kH - kTop - kBottom); };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + f1(kW) + "\" height=\"" + f1(kH) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<line x1=\"" + f1(kLeft) + "\" y1=\"" + f1(Y(0)) + "\" x2=\"" + f1(kW - kRight) + "\" y2=\"" + f1(Y(0)) +
       "\" stroke=\"black\"/>\n";
  s += "<line x1=\"" + f1(kLeft) + "\" y1=\"" + f1(kTop) + "\" x2=\"" + f1(kLeft) + "\" y2=\"" + f1(Y(0)) +
       "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // y ticks in GiB
    double b = ymax * i / 4;
    s += "<text x=\"" + f1(kLeft - 6) + "\" y=\"" + f1(Y(b) + 4) + "\" text-anchor=\"end\">" + format_gib(static_cast<std::uint64_t>(b), 1) +
         "</text>\n";
  }
  s += "<text x=\"14\" y=\"" + f1(kTop + 120) + "\" transform=\"rotate(-90 14 " + f1(kTop + 120) +
       ")\">peak GiB</text>\n";
  s += "<text x=\"" + f1((kW + kLeft) / 2) + "\" y=\"" + f1(kH - 12) + "\" text-anchor=\"middle\">" + r.parameter +
       "</text>\n";
  if (r.capacity_bytes) {
    double y = Y(static_cast<double>(*r.capacity_bytes));
    s += "<line x1=\"" + f1(kLeft) + "\" y1=\"" + f1(y) + "\" x2=\"" + f1(kW - kRight) + "\" y2=\"" + f1(y) +
         "\" stroke=\"#c00\" stroke-dasharray=\"6 4\"/><text x=\"" + f1(kW - kRight) + "\" y=\"" + f1(y - 4) +
         "\" text-anchor=\"end\" fill=\"#c00\">card memory</text>\n";
  }
  if (r.fit) {
    std::string path;
    for (int i = 0; i <= 40; ++i) {
      double v = xmax * i / 40;
      double b = std::clamp(r.fit->predict(v), 0.0, ymax);
      path += (i ? " L" : "M") + f1(X(v)) + " " + f1(Y(b));
    }
    s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#888\" stroke-dasharray=\"3 3\"/>\n";
  }
  for (const auto& t : r.trials) {
    double x = X(static_cast<double>(t.value));
    const char* color = t.outcome == Outcome::Ok ? "#2a7" : t.outcome == Outcome::Oom ? "#c00" : "#888";
    double y = t.peak_bytes ? Y(static_cast<double>(*t.peak_bytes)) : Y(ymax / 1.05);
    s += "<circle cx=\"" + f1(x) + "\" cy=\"" + f1(y) + "\" r=\"4\" fill=\"" + color + "\"><title>" + r.parameter +
         " " + std::to_string(t.value) + ": " + outcome_name(t.outcome) + "</title></circle>\n";
    s += "<text x=\"" + f1(x) + "\" y=\"" + f1(Y(0) + 14) + "\" text-anchor=\"middle\">" + std::to_string(t.value) +
         "</text>\n";
  }
  return s + "</svg>\n";
}

std::string render_html(const ProbeReport& r) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vramdoc probe</title></head>\n"
         "<body style=\"font-family:sans-serif\"><h1>vramdoc probe</h1>\n<p><b>" + xml_escape(verdict_line(r)) +
         "</b></p>\n" + render_svg(r) + "<pre>" + xml_escape(render_text(r)) + "</pre></body></html>\n";
}

}  // namespace vramdoc::probe
