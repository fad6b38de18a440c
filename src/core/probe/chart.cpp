// The probe's chart: each trial's peak against its value, the fitted peak, the card's memory and
// the recommendation (core/chart); and the HTML page of `probe --html`.
#include <algorithm>

#include "core/chart/svg.hpp"
#include "core/html_page.hpp"
#include "core/probe/report.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::probe {

namespace {

const char* colour(Outcome o) { return o == Outcome::Ok ? "#2a7a4a" : o == Outcome::Oom ? "#c0392b" : "#888888"; }

}  // namespace

chart::Chart probe_chart(const ProbeReport& r) {
  chart::Chart c;
  c.id = "probe";
  c.x = {.quantity = chart::Quantity::Count, .title = r.parameter, .min = 0.0};
  c.y = {.quantity = chart::Quantity::Bytes, .title = "peak GPU memory of the trial"};
  std::size_t unread = 0;
  double xmax = 1;
  for (Outcome o : {Outcome::Ok, Outcome::Oom, Outcome::Failed}) {
    chart::Dots d{.colour = colour(o), .label = outcome_name(o), .cls = std::string("trials-") + outcome_name(o), .radius = 4.5};
    for (const auto& t : r.trials) {
      xmax = std::max(xmax, static_cast<double>(t.value));
      if (t.outcome != o) continue;
      unread += !t.peak_bytes;
      d.points.push_back({static_cast<double>(t.value), t.peak_bytes ? static_cast<double>(*t.peak_bytes) : 0.0});
      d.tips.push_back(r.parameter + " " + std::to_string(t.value) + ": " + outcome_name(o) +
                       (t.peak_bytes ? ", peak " + format_bytes(*t.peak_bytes) : ", no memory reading"));
    }
    if (!d.points.empty()) c.dots.push_back(std::move(d));
  }
  if (r.fit) {
    chart::Line l{.colour = "#777777", .label = "fitted peak", .cls = "fit", .dashed = true};
    for (int i = 0; i <= 60; ++i) {
      const double v = xmax * i / 60;
      l.points.push_back({v, std::max(0.0, r.fit->predict(v))});
    }
    if (r.capacity_bytes)  // the line stops where it leaves the chart
      l.points.erase(std::find_if(l.points.begin(), l.points.end(), [&](const chart::Point& p) { return p.y > 1.1 * double(*r.capacity_bytes); }),
                     l.points.end());
    c.lines.push_back(std::move(l));
  }
  if (r.capacity_bytes)
    c.rules.push_back({.y = double(*r.capacity_bytes), .colour = "#c0392b", .label = "card memory " + format_bytes(*r.capacity_bytes, 1), .cls = "capacity"});
  if (r.recommendation.value)
    c.markers.push_back({.x = double(*r.recommendation.value), .colour = "#2a7a4a",
                         .label = "recommended: " + r.parameter + " " + std::to_string(*r.recommendation.value), .cls = "recommended", .dashed = true});
  if (unread) c.notes.push_back(std::to_string(unread) + " trial(s) had no memory reading: drawn on the value axis.");
  if (unread == r.trials.size() && !r.capacity_bytes) {  // no memory figure at all: the outcomes along the values only
    c.y.title = "no memory readings: each trial's outcome";
    c.y.ticks = false;
  }
  if (r.trials.empty()) c.notes.push_back("No trials ran.");
  return c;
}

std::string render_svg(const ProbeReport& r) { return chart::render_svg(probe_chart(r), chart::kWide); }

std::string render_html(const ProbeReport& r) {
  return html_page_head("vramdoc probe") + "<h1>vramdoc probe</h1>\n<p><b>" + xml_escape(verdict_line(r)) + "</b></p>\n" +
         chart::render_figure(probe_chart(r)) + "<pre>" + xml_escape(render_text(r)) + "</pre></body></html>\n";
}

}  // namespace vramdoc::probe
