// vramdoc's one chart renderer: a chart described as plain data (lines, points, bands, rules,
// markers, stacked areas on a bytes-over-time or bytes-over-value plane) drawn as inline SVG with
// round ticks, axis titles and a legend. Every drawn piece of data has the class "mark" (the
// browser test checks that each chart draws some). Series are reduced to the plot's pixels
// (min / max per column) here, whatever their length. The page gets two drawings of each chart,
// a wide and a narrow one, and CSS shows the one that fits (kChartCss): text stays readable
// from a phone to a wide screen, and nothing is cut.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/chart/axis.hpp"
#include "core/chart/reduce.hpp"

namespace vramdoc::chart {

struct Axis {
  Quantity quantity = Quantity::Seconds;
  std::string title{};           // "time since the recording began", "GPU memory"
  std::optional<double> min{}, max{};  // the range to show at least (raw units); data widens it
  bool from_zero = true;         // bytes and counts start at 0 (time: when it begins near 0)
  bool ticks = true;             // false: no values to show (only the title and the data's order)
};

struct Line {
  std::vector<Point> points{};  // raw units, in x order
  std::string colour{}, label{};  // label: the legend's and the tooltip's
  std::string cls{};            // extra class (the tests find pieces by it)
  bool step = false;          // a staircase: each value holds until the next
  bool dashed = false;
  double width = 1.5;
  bool on_top = false;        // drawn over the points (a fit over the points it was fitted to)
};

struct Dots {
  std::vector<Point> points{};
  std::string colour{}, label{}, cls{};
  double radius = 3;
  std::vector<std::string> tips{};  // optional tooltip per point (same order); empty: the label
};

struct Band {  // a span of x, e.g. the warm-up
  double x0 = 0, x1 = 0;
  std::string colour{}, label{}, cls{};
};

struct Rule {  // a horizontal line at a y value, e.g. the card's capacity
  double y = 0;
  std::string colour{}, label{}, cls{};
};

struct Marker {  // a vertical line at an x value, e.g. the OOM
  double x = 0;
  std::string colour{}, label{}, cls{};
  bool dashed = false;
  std::string tag{};  // the short text beside the line in the plot ("OOM"); empty: the label
};

struct Area {  // a filled polygon: the upper edge left to right, then the lower edge back
  std::vector<Point> upper{}, lower{};
  std::string colour{}, label{}, cls{};
};

struct Chart {
  std::string id;     // unique on the page (ids of the two drawings derive from it)
  std::string title;  // a short heading above the chart ("" for none)
  Axis x, y;  // a time axis spans the data exactly, a bytes or count axis ends at a round tick
  std::vector<Band> bands;
  std::vector<Area> areas;
  std::vector<Line> lines;
  std::vector<Dots> dots;
  std::vector<Rule> rules;
  std::vector<Marker> markers;
  std::vector<std::string> notes;  // what could not be drawn, shown under the chart
  std::vector<double> ticks_x;     // small ticks on the x axis (step ends), at most 300 drawn
  std::string ticks_label;         // their legend entry ("steps")
};

// The size of one drawing, in SVG units (the page scales it to its width).
struct Layout {
  double width = 900, height = 340;
  double font = 12;
  int x_ticks = 8, y_ticks = 6;  // about this many intervals
};
inline constexpr Layout kWide{900, 340, 12, 8, 6};
inline constexpr Layout kNarrow{420, 320, 13, 4, 5};

// One drawing of `c` at `layout`: an <svg> with a viewBox, 100 % wide.
std::string render_svg(const Chart& c, const Layout& layout);
// The chart for a page: its title, the legend (HTML, wraps at any width), the wide and the narrow
// drawing, and its notes; `kChartCss` must be on the page once.
std::string render_figure(const Chart& c);
// The style sheet the figures need: the drawings fill their container, the narrow one below 640 px.
extern const char* const kChartCss;

}  // namespace vramdoc::chart
