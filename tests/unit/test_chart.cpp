// The charts of the HTML reports (issue 32, point 2): round ticks, bounded series, responsive
// drawings, and a diagnosis drawn as its verdict rests on it (step-end bytes, the fit, the
// capacity, the projected OOM, the warm-up aligned with the steps, every rank charted).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "core/chart/axis.hpp"
#include "core/chart/reduce.hpp"
#include "core/chart/svg.hpp"
#include "core/report/job_report.hpp"
#include "core/timeline/chart.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/render.hpp"
#include "test_files.hpp"

namespace vramdoc::chart {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Regression: the leak chart's memory ticks were 2.6 / 5.3 / 7.9 GiB (a quarter of the peak each).
TEST(ChartAxis, TicksAreOneTwoOrFiveTimesAPowerOfTen) {
  using Case = std::tuple<double, double, int>;
  for (auto [lo, hi, target] : {Case{0.0, 7.9, 4}, Case{0.0, 143.7, 6}, Case{0.0, 0.37, 5}, Case{12.0, 4800.0, 8}, Case{0.0, 1.0, 6}}) {
    const Ticks t = round_ticks(lo, hi, target);
    const double mantissa = t.step / std::pow(10.0, std::floor(std::log10(t.step)));
    EXPECT_TRUE(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9) << t.step;
    EXPECT_LE(t.values.front(), lo);
    EXPECT_GE(t.values.back(), hi);
    EXPECT_LE(t.values.size(), static_cast<std::size_t>(target) + 2) << hi;
    for (double v : t.values) EXPECT_NEAR(std::remainder(v, t.step), 0, t.step * 1e-6) << v;
  }
  EXPECT_EQ(round_ticks(0, 7.9, 4).values, (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(tick_label(2.5, 0.5), "2.5");
  EXPECT_EQ(tick_label(200, 100), "200");
  EXPECT_EQ(unit_for(Quantity::Bytes, 8.5 * 1073741824.0).name, "GiB");
  EXPECT_EQ(unit_for(Quantity::Bytes, 600 * 1048576.0).name, "MiB");
  EXPECT_EQ(unit_for(Quantity::Seconds, 4.8).name, "s");
  EXPECT_EQ(unit_for(Quantity::Seconds, 3 * 86400.0).name, "h");
}

// A days-long series streamed through the reducer keeps every bin's extremes in bounded memory.
TEST(ChartReduce, AnyLengthBecomesAtMostTwoPointsPerBinWithItsExtremes) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 1);
  MinMaxReducer r(500);  // no width given: it starts from the first gap and doubles
  double highest = -1e9, lowest = 1e9, at_high = 0, at_low = 0;
  for (int i = 0; i < 2'000'000; ++i) {
    const double x = i * 0.02, y = 1000 + noise(rng) + (i == 1'234'567 ? 50 : 0) - (i == 777'777 ? 40 : 0);
    if (y > highest) highest = y, at_high = x;
    if (y < lowest) lowest = y, at_low = x;
    r.add(x, y);
  }
  const auto pts = r.points();
  EXPECT_LE(pts.size(), 2 * 500 + 2u);
  EXPECT_TRUE(std::is_sorted(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x; }));
  EXPECT_TRUE(std::any_of(pts.begin(), pts.end(), [&](const Point& p) { return p.x == at_high && p.y == highest; }));
  EXPECT_TRUE(std::any_of(pts.begin(), pts.end(), [&](const Point& p) { return p.x == at_low && p.y == lowest; }));
  EXPECT_EQ(pts.front().x, 0);
  EXPECT_EQ(pts.back().x, 1'999'999 * 0.02);
  const std::vector<Point> few = {{0, 1}, {1, 2}, {2, 3}};
  EXPECT_EQ(reduce(few, 10).size(), 3u);  // short series stay as they are
}

// Regression: the fixed 900-unit chart was cut at 400 px; now a viewBox, 100 % wide, two drawings.
TEST(ChartSvg, DrawingsScaleToTheirContainerAndBoundTheirPoints) {
  Chart c;
  c.id = "t";
  c.x = {.quantity = Quantity::Seconds, .title = "time", .min = 0.0, .from_zero = false};
  c.y = {.quantity = Quantity::Bytes, .title = "GPU memory"};
  Line l{.colour = "#000", .label = "a million readings", .cls = "big"};
  for (int i = 0; i < 1'000'000; ++i) l.points.push_back({i * 0.0005, 1e9 + (i % 1000) * 1e6});  // 500 s
  c.lines.push_back(std::move(l));
  const std::string wide = render_svg(c, kWide), narrow = render_svg(c, kNarrow);
  EXPECT_NE(wide.find("viewBox=\"0 0 900.0 340.0\" width=\"100%\""), std::string::npos);
  EXPECT_NE(narrow.find("viewBox=\"0 0 420.0 320.0\" width=\"100%\""), std::string::npos);
  EXPECT_LT(count(wide, ","), 4000u);  // a few points per unit of width, not a million
  const std::string figure = render_figure(c);
  EXPECT_EQ(count(figure, "<svg xmlns"), 2u);
  EXPECT_NE(figure.find("class=\"chart-wide\""), std::string::npos);
  EXPECT_NE(figure.find("class=\"chart-narrow\""), std::string::npos);
  EXPECT_NE(figure.find("GPU memory (GiB)"), std::string::npos);  // axis titles with their units
  EXPECT_NE(figure.find("time (s)"), std::string::npos);
}

}  // namespace
}  // namespace vramdoc::chart

namespace vramdoc::timeline {
namespace {

Timeline fixture(const std::string& name) {
  auto tl = read_timeline(test::file_text(std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/" + name), name);
  EXPECT_TRUE(tl.ok()) << name;
  return tl ? *tl : Timeline{};
}

bool has(const std::string& svg, const std::string& cls) { return svg.find("class=\"" + cls) != std::string::npos || svg.find(" " + cls + "\"") != std::string::npos; }

// Regression: the leak chart drew a dashed fit near the axis and not the step-end bytes it rests on;
// no capacity line, no projected OOM.
TEST(DiagnosisChart, ALeakDrawsItsStepEndBytesTheFitTheCapacityAndTheProjectedOom) {
  const Timeline tl = fixture("leak_tensor.json");
  const Diagnosis d = classify(tl);
  ASSERT_EQ(d.verdict, Verdict::Leak);
  const chart::Chart c = diagnosis_chart(d);
  ASSERT_EQ(c.dots.size(), 1u);
  EXPECT_EQ(c.dots[0].label, d.evidence.trend_series);
  EXPECT_GE(c.dots[0].points.size(), 8u);
  const auto fit = std::find_if(c.lines.begin(), c.lines.end(), [](const chart::Line& l) { return l.cls == "fit"; });
  ASSERT_NE(fit, c.lines.end());
  EXPECT_NE(fit->label.find("per step"), std::string::npos);
  ASSERT_TRUE(d.evidence.capacity_bytes);
  const bool projected = std::any_of(c.markers.begin(), c.markers.end(), [](const chart::Marker& m) { return m.cls == "projected-oom"; });
  const bool written = std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) { return n.find("run out of memory at") != std::string::npos; });
  EXPECT_NE(projected, written);  // drawn on the recording's chart, or said there and drawn on the next
  if (projected) {
    EXPECT_FALSE(c.rules.empty());  // the line it runs into
  }
  const auto next = projection_chart(d);
  ASSERT_EQ(next.has_value(), written);
  if (next) {
    EXPECT_EQ(next->rules.size(), 1u);
    EXPECT_EQ(next->rules[0].y, double(*d.evidence.capacity_bytes));
    ASSERT_EQ(next->markers.size(), 1u);
    EXPECT_EQ(next->markers[0].cls, "projected-oom");
    EXPECT_NEAR(next->markers[0].x, d.picture.t0 + *d.evidence.projected_oom_seconds, 1e-9);
  }
  const std::string svg = chart::render_svg(c, chart::kWide);
  EXPECT_TRUE(has(svg, "basis"));
  EXPECT_TRUE(has(svg, "fit"));
}

// Regression: a two-rank report's warm-up band ended where the steps began (it was measured from
// the first step end and drawn from the recording's start); only the leaking rank was charted.
TEST(DiagnosisChart, TwoRanksEachGetAChartAndTheWarmUpEndsAtAStepEnd) {
  const auto judged = judge_job({fixture("h200_two_ranks_leak.jsonl")});
  ASSERT_TRUE(judged.processes);
  ASSERT_EQ(judged.processes->processes.size(), 2u);
  for (const auto& p : judged.processes->processes) {
    const auto& pic = p.diagnosis.picture;
    ASSERT_TRUE(pic.warmup_end_seconds);
    ASSERT_FALSE(p.diagnosis.step_ends.empty());
    EXPECT_GE(*pic.warmup_end_seconds, p.diagnosis.step_ends.front());  // not before the first step
    EXPECT_TRUE(std::any_of(pic.basis.begin(), pic.basis.end(), [&](const chart::Point& q) { return q.x == *pic.warmup_end_seconds; }));
  }
  report::JobReport r;
  r.timeline = judged.headline;
  r.diagnosis = judged.diagnosis;
  r.processes = judged.processes;
  const std::string page = report::render_html(r);
  EXPECT_NE(page.find("id=\"process-1\""), std::string::npos);
  EXPECT_NE(page.find("id=\"process-2\""), std::string::npos);
  EXPECT_NE(page.find(": leak</h3>"), std::string::npos);
  EXPECT_NE(page.find(": stable</h3>"), std::string::npos);
}

// The picture a diagnosis keeps is bounded whatever the recording's length.
TEST(DiagnosisChart, ThePictureIsBounded) {
  Timeline tl;
  tl.total_bytes = 80ULL << 30;
  for (int i = 0; i < 30'000; ++i) {  // 15 times the bound (the classifier's own time grows faster: issue 31)
    Sample s;
    s.t_seconds = i * 0.02, s.process_used_bytes = (10ULL << 30) + static_cast<std::uint64_t>(i % 97) * (1ULL << 20);
    tl.samples.push_back(s);
  }
  const Diagnosis d = classify(tl);
  EXPECT_LE(d.picture.used.size(), 2 * kPictureBins + 2);
  EXPECT_LE(d.picture.basis.size(), 2 * kPictureBins + 2);
  EXPECT_EQ(d.picture.t1, tl.samples.back().t_seconds);
}

}  // namespace
}  // namespace vramdoc::timeline
