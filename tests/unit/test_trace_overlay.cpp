// The traced-bytes overlay (core/trace/overlay): merging processes, aligning the clocks, bounds.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/timeline/reader.hpp"
#include "core/trace/overlay.hpp"

using namespace vramdoc;
using namespace vramdoc::trace;

namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;

ProcessTrace process(std::uint32_t pid, std::uint64_t start_unix_ns, std::vector<TimelinePoint> points) {
  ProcessTrace p;
  p.pid = pid;
  p.start_unix_ns = start_unix_ns;
  p.analysis.timeline = std::move(points);
  for (const auto& point : p.analysis.timeline) p.analysis.peak_bytes = std::max(p.analysis.peak_bytes, point.bytes);
  p.analysis.live_bytes = p.analysis.timeline.empty() ? 0 : p.analysis.timeline.back().bytes;
  return p;
}

timeline::Timeline driver(std::vector<std::pair<double, std::uint64_t>> samples) {
  timeline::Timeline tl;
  for (const auto& [t, bytes] : samples) tl.samples.push_back({t, bytes, {}, {}, {}});
  return tl;
}

}  // namespace

TEST(TraceOverlay, MergeSumsProcessesOnTheWallClock) {
  // Process 2 started one second after process 1: its t = 0 is t = 1 on the merged clock.
  const std::vector<ProcessTrace> ps{process(1, 100 * kSecond, {{0.5, 10}, {2.0, 30}}),
                                     process(2, 101 * kSecond, {{0.0, 5}, {0.5, 0}})};
  const auto merged = merge_processes(ps, 100);
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_DOUBLE_EQ(merged[0].t_s, 0.5);
  EXPECT_EQ(merged[0].bytes, 10u);
  EXPECT_DOUBLE_EQ(merged[1].t_s, 1.0);
  EXPECT_EQ(merged[1].bytes, 15u);
  EXPECT_DOUBLE_EQ(merged[2].t_s, 1.5);
  EXPECT_EQ(merged[2].bytes, 10u);
  EXPECT_EQ(merged[3].bytes, 30u);
}

TEST(TraceOverlay, MergeIsBoundedAndKeepsThePeak) {
  std::vector<TimelinePoint> points;
  for (int i = 0; i < 10000; ++i) points.push_back({i * 0.001, static_cast<std::uint64_t>(i == 4321 ? 1'000'000 : i)});
  const auto merged = merge_processes({process(1, 0, points)}, 50);
  EXPECT_LE(merged.size(), 50u);
  std::uint64_t peak = 0;
  for (const auto& p : merged) peak = std::max(peak, p.bytes);
  EXPECT_EQ(peak, 1'000'000u);
}

TEST(TraceOverlay, WallClockAlignmentIsExact) {
  const auto tl = driver({{0, 0}, {1, 0}, {2, 500}});
  // The trace began 1.25 s after the recording: trace t = 0.5 is timeline t = 1.75.
  const auto s = build_overlay({process(1, 10 * kSecond + kSecond / 4, {{0.5, 100}})}, tl, 9 * kSecond);
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_NEAR(s.points[0].t_seconds, 1.75, 1e-9);
  EXPECT_NE(s.alignment.find("wall clock"), std::string::npos);
}

TEST(TraceOverlay, WithoutWallClockFirstAllocationMeetsFirstRise) {
  // The driver's number first rises at t = 3; the first traced bytes appear at trace t = 0.2.
  const auto tl = driver({{0, 400}, {1, 400}, {2, 400}, {3, 600}, {4, 700}});
  const auto s = build_overlay({process(1, 0, {{0.1, 0}, {0.2, 100}, {1.2, 300}})}, tl);
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_NEAR(s.points[1].t_seconds, 3.0, 1e-9);
  EXPECT_NEAR(s.points[2].t_seconds, 4.0, 1e-9);
  EXPECT_EQ(s.peak_bytes, 300u);
  EXPECT_NEAR(s.peak_seconds, 4.0, 1e-9);
  EXPECT_NE(s.alignment.find("approximate"), std::string::npos);
}

TEST(TraceOverlay, EmptyTraceGivesAnEmptySeries) {
  const auto s = build_overlay({process(1, 0, {})}, driver({{0, 1}, {1, 2}}));
  EXPECT_TRUE(s.points.empty());
  EXPECT_EQ(s.peak_bytes, 0u);
}

TEST(TraceOverlay, RecordedPytorchTraceOnARecordedTimeline) {
  auto t = read_trace_file(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/traces/h200_pytorch_leak.vdt");
  ASSERT_TRUE(t.ok()) << t.error();
  std::ifstream in(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/timelines/trace_leak_mid.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto tl = timeline::read_timeline(text, "trace_leak_mid.json");
  ASSERT_TRUE(tl.ok()) << tl.error();
  ProcessTrace p{"trace.vdt", t->pid, t->truncated, uses_pytorch(*t), analyze_trace(*t), {}, t->start_unix_ns, {}};
  const auto s = build_overlay({p}, *tl);
  EXPECT_TRUE(s.pytorch);
  EXPECT_EQ(s.peak_bytes, p.analysis.peak_bytes);
  EXPECT_EQ(s.live_bytes_at_end, p.analysis.live_bytes);
  EXPECT_LE(s.points.size(), kOverlayPoints);
  EXPECT_LE(s.top_sites.size(), kOverlaySites);
  for (std::size_t i = 0; i < s.top_sites.size(); ++i)  // stacks ending in one call site are one row
    for (std::size_t k = i + 1; k < s.top_sites.size(); ++k)
      EXPECT_FALSE(s.top_sites[i].where == s.top_sites[k].where && s.top_sites[i].why == s.top_sites[k].why);
  const auto j = overlay_json(s);
  EXPECT_EQ(j["peak_bytes"], p.analysis.peak_bytes);
  EXPECT_EQ(j["timeline"].size(), s.points.size());
  const auto text_report = render_overlay_text(s, *tl);
  EXPECT_NE(text_report.find("traced peak"), std::string::npos);
  EXPECT_NE(text_report.find("PYTORCH_NO_CUDA_MEMORY_CACHING=1"), std::string::npos);
}
