#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/bench/render.hpp"
#include "core/units.hpp"

using namespace vramdoc;
using namespace vramdoc::bench;

namespace {

BenchReport sample_report() {
  BenchReport r;
  r.device_name = "NVIDIA H200";
  r.sm_clock_mhz = 1980;
  Measure copy;
  copy.level = "device";
  copy.name = "copy";
  copy.result = summarize({4300, 4310, 4290});
  copy.peak = 4814.3;
  copy.bytes_counted = "read + write";
  copy.config = "2.00 GiB per array";
  copy.variants = "a: 1; b: 2";
  Measure p2p;
  p2p.level = "p2p";
  p2p.name = "peer copy";
  p2p.waived = "needs 2 GPUs (1 present)";
  Measure broken;
  broken.level = "L2";
  broken.name = "read <3 MiB>";
  broken.error = "l2 read: wrong result";
  Measure lat;
  lat.level = "latency";
  lat.name = "L1";
  lat.unit = Unit::Cycles;
  lat.result = summarize({32});
  lat.ns = 16.2;
  r.measures = {copy, p2p, broken, lat};
  r.latency = {{4 * KiB, 32, 16.2}, {64 * MiB, 614, 310}, {GiB, 690, 349}};
  r.l2_sweep = {{3 * MiB, 10967}};
  r.notes = {"memory budget 69.64 GiB"};
  GpuSample s;
  s.sm_clock_mhz = 1980;
  s.throttle_reasons = 0;
  r.before = s;
  return r;
}

}  // namespace

TEST(BenchRender, TableShowsResultPeakPercentAndWhy) {
  const auto text = render_text(sample_report());
  EXPECT_NE(text.find("4300 GB/s"), std::string::npos);
  EXPECT_NE(text.find("4290-4310"), std::string::npos);
  EXPECT_NE(text.find("89.3"), std::string::npos);  // 4300 / 4814.3
  EXPECT_NE(text.find("read + write; 2.00 GiB per array"), std::string::npos);
  EXPECT_NE(text.find("waived"), std::string::npos);
  EXPECT_NE(text.find("needs 2 GPUs"), std::string::npos);
  EXPECT_NE(text.find("FAILED"), std::string::npos);
  EXPECT_NE(text.find("32 cycles (16 ns)"), std::string::npos);
  EXPECT_NE(text.find("before: SM 1980 MHz"), std::string::npos);
  EXPECT_NE(text.find("note: memory budget"), std::string::npos);
  EXPECT_EQ(text.find("a: 1; b: 2"), std::string::npos);  // the tuner's variants are JSON only
}

TEST(BenchRender, JsonKeepsEveryMeasureAndCurve) {
  const auto j = nlohmann::json::parse(render_json(sample_report()));
  EXPECT_EQ(j["schema"], "vramdoc.bench/1");
  ASSERT_EQ(j["measures"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["measures"][0]["median"].get<double>(), 4300);
  EXPECT_NEAR(j["measures"][0]["percent_of_peak"].get<double>(), 89.32, 0.01);
  EXPECT_EQ(j["measures"][0]["variants"], "a: 1; b: 2");
  EXPECT_EQ(j["measures"][1]["waived"], "needs 2 GPUs (1 present)");
  EXPECT_FALSE(j["measures"][1].contains("median"));
  EXPECT_EQ(j["measures"][2]["error"], "l2 read: wrong result");
  EXPECT_EQ(j["measures"][3]["unit"], "cycles");
  EXPECT_EQ(j["latency"].size(), 3u);
  EXPECT_EQ(j["l2_sweep"][0]["footprint_bytes"], 3 * MiB);
  EXPECT_EQ(j["nvml_before"]["sm_clock_mhz"], 1980);
}

TEST(BenchRender, SvgHasTheCurveAndEscapedBars) {
  const auto svg = render_svg(sample_report());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("<path d=\"M"), std::string::npos);
  EXPECT_NE(svg.find("device copy"), std::string::npos);
  EXPECT_EQ(svg.find("read <3"), std::string::npos);  // a failed measure gets no bar; text is escaped
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(BenchRender, SvgOfAnEmptyReportSaysNotMeasured) {
  BenchReport r;
  r.device_name = "x<y";
  const auto svg = render_svg(r);
  EXPECT_NE(svg.find("x&lt;y"), std::string::npos);
  EXPECT_NE(svg.find("not measured"), std::string::npos);
}
