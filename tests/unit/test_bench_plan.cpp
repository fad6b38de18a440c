#include <gtest/gtest.h>

#include "core/bench/plan.hpp"
#include "core/units.hpp"

using namespace vramdoc;
using namespace vramdoc::bench;

TEST(BenchStats, MedianOfOddAndEvenSeries) {
  auto odd = summarize({5, 1, 3});
  EXPECT_DOUBLE_EQ(odd.median, 3);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.max, 5);
  EXPECT_EQ(odd.samples, 3);
  EXPECT_DOUBLE_EQ(summarize({4, 1, 2, 3}).median, 2.5);
  EXPECT_EQ(summarize({}).samples, 0);
}

TEST(BenchStats, RatesInDecimalGigabytesPerSecond) {
  // 4e9 bytes in 1 s and in 2 s: 4 and 2 GB/s; a zero time is dropped, not infinite.
  auto r = rate_gbps(4e9, {1.0, 2.0, 0.0});
  EXPECT_EQ(r.samples, 2);
  EXPECT_DOUBLE_EQ(r.max, 4.0);
  EXPECT_DOUBLE_EQ(r.min, 2.0);
}

TEST(BenchPlan, OnlyAcceptsKnownSuites) {
  auto ok = parse_only("device,latency,,l2");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), 3u);
  auto bad = parse_only("device,l3");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("'l3'"), std::string::npos);
  EXPECT_NE(bad.error().find("hostram"), std::string::npos);
  EXPECT_FALSE(parse_only(","));
}

TEST(BenchPlan, StreamFootprintUsesTheShareOfFreeMemoryCappedAt6GiB) {
  const std::uint64_t l2 = 50 * MiB;
  EXPECT_EQ(*plan_stream_bytes(140 * GiB, 0.5, l2, false), 6 * GiB);
  EXPECT_EQ(*plan_stream_bytes(140 * GiB, 0.5, l2, true), 3 * GiB);
  // 3 GiB free at half: 1.5 GiB budget, 512 MiB per array for triad.
  EXPECT_EQ(*plan_stream_bytes(3 * GiB, 0.5, l2, false), 1536 * MiB);
  EXPECT_EQ(stream_array_bytes(1536 * MiB, 3), 512 * MiB);
  // An odd budget still splits into whole MiB that fit it.
  auto total = *plan_stream_bytes(3 * GiB + 12345, 0.37, l2, false);
  for (int arrays : {1, 2, 3}) EXPECT_LE(stream_array_bytes(total, arrays) * arrays, total);
  EXPECT_EQ(stream_array_bytes(6 * GiB, 1), 6 * GiB);
  EXPECT_EQ(stream_array_bytes(6 * GiB, 2), 3 * GiB);
  EXPECT_EQ(stream_array_bytes(6 * GiB, 0), 0u);
}

TEST(BenchPlan, RefusesWhenArraysWouldFitInL2) {
  auto r = plan_stream_bytes(600 * MiB, 0.5, 50 * MiB, false);  // 100 MiB per array < 200 MiB
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("too little free device memory"), std::string::npos);
  EXPECT_FALSE(plan_stream_bytes(140 * GiB, 0.0, 50 * MiB, false));
}

TEST(BenchPlan, ManagedMemoryNeverAboveAQuarterOfFree) {
  EXPECT_EQ(plan_managed_bytes(140 * GiB, false), GiB);
  EXPECT_EQ(plan_managed_bytes(140 * GiB, true), 256 * MiB);
  EXPECT_EQ(plan_managed_bytes(2 * GiB, false), 512 * MiB);
  EXPECT_EQ(plan_managed_bytes(200 * MiB, false), 0u);  // 50 MiB would be under the 64 MiB floor
  for (std::uint64_t free = 0; free < 8 * GiB; free += 77 * MiB) EXPECT_LE(plan_managed_bytes(free, false) * 4, free);
}

TEST(BenchPlan, LatencyFootprintsAreSortedUniqueAndDenseInL2) {
  const auto f = latency_footprints(50 * MiB, 4 * GiB, false);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front(), 4 * KiB);
  EXPECT_LE(f.back(), 4 * GiB);
  EXPECT_TRUE(std::is_sorted(f.begin(), f.end()));
  EXPECT_EQ(std::adjacent_find(f.begin(), f.end()), f.end());
  int in_l2 = 0;
  for (auto x : f) in_l2 += x >= 15 * MiB && x <= 50 * MiB;
  EXPECT_GE(in_l2, 6);
  EXPECT_LT(latency_footprints(50 * MiB, 512 * MiB, true).size(), f.size());
}

TEST(BenchPlan, CacheFootprints) {
  const auto l2 = l2_footprints(50 * MiB, false);
  EXPECT_EQ(l2.front(), 3 * MiB);  // 1/16 of 50 MiB, rounded down to MiB
  EXPECT_EQ(l2.back(), 100 * MiB);
  EXPECT_EQ(l1_footprints(false).back(), 256 * KiB);
}

TEST(BenchPlan, PlateausReadOffTheCurveByWindow) {
  std::vector<LatencyPoint> curve;
  for (std::uint64_t f = 4 * KiB; f <= 4 * GiB; f *= 2) {
    const double cycles = f <= 128 * KiB ? 34 : f <= 16 * MiB ? 282 : f <= 50 * MiB ? 450 : f < GiB ? 660 : 900;
    curve.push_back({f, cycles, cycles / 1.98});
  }
  curve.push_back({37 * MiB, 440, 222});
  std::sort(curve.begin(), curve.end(), [](auto& a, auto& b) { return a.footprint_bytes < b.footprint_bytes; });
  const auto rows = latency_measures(curve, 256 * KiB, 50 * MiB);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].name, "L1");
  EXPECT_DOUBLE_EQ(rows[0].result.median, 34);
  EXPECT_DOUBLE_EQ(rows[1].result.median, 282);
  EXPECT_DOUBLE_EQ(rows[2].result.median, 440);
  EXPECT_DOUBLE_EQ(rows[3].result.median, 660);
  EXPECT_DOUBLE_EQ(rows[4].result.median, 900);
  EXPECT_TRUE(rows[4].waived.empty());
  EXPECT_FALSE(plateau(curve, 5 * GiB, 6 * GiB));
}

TEST(BenchPlan, ThrottleNoteOnlyForPowerAndThermal) {
  EXPECT_FALSE(throttle_note(0));
  EXPECT_FALSE(throttle_note(0x1));  // GPU idle
  auto note = throttle_note(0x4 | 0x40);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("software power cap, software thermal slowdown"), std::string::npos);
}

TEST(BenchPlan, AffineWordSumMatchesTheLoopModulo2To32) {
  for (std::uint64_t words : {0ULL, 1ULL, 2ULL, 7ULL, 1000ULL, 65537ULL}) {
    for (std::uint32_t mul : {0u, 1u, 4u}) {
      std::uint32_t loop = 0;
      for (std::uint64_t w = 0; w < words; ++w) loop += mul * static_cast<std::uint32_t>(w) + 0x1234u;
      EXPECT_EQ(affine_word_sum(words, mul, 0x1234u), loop) << words << " words, mul " << mul;
    }
  }
  // Past 2^32 words the word index wraps, as the kernels' 32-bit words do: 2^33 words of w sum to 0.
  EXPECT_EQ(affine_word_sum(std::uint64_t{1} << 33, 1, 0), 0u);
}

TEST(BenchPlan, EverySuiteNameParsesBackToItsSuite) {
  auto all = parse_only(suite_list());
  ASSERT_TRUE(all) << all.error();
  EXPECT_EQ(all->size(), std::size(kSuites));
  for (Suite s : kSuites) EXPECT_EQ(*parse_only(suite_name(s)), std::set<Suite>{s}) << suite_name(s);
}
