// The short-trial growth test of `vramdoc probe` (src/core/probe/growth.cpp).
#include <gtest/gtest.h>

#include <functional>

#include "core/probe/growth.hpp"
#include "core/timeline/classify.hpp"

using namespace vramdoc;
using namespace vramdoc::probe;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;

// A trial recorded the way `vramdoc run` does: a sample every `interval` seconds, a "step N" mark
// every `step` seconds after `start`; memory(t) is what the driver would report at t.
timeline::Timeline trial(int steps, double start, double step, double interval,
                         const std::function<std::uint64_t(double)>& memory) {
  timeline::Timeline tl;
  const double end = start + steps * step + 0.05;
  for (double t = 0; t <= end; t += interval) {
    timeline::Sample s;
    s.t_seconds = t;
    s.process_used_bytes = memory(t);
    tl.samples.push_back(s);
  }
  for (int k = 0; k < steps; ++k) {
    timeline::Mark m;
    m.t_seconds = start + (k + 1) * step + 0.001;
    m.label = "step " + std::to_string(k);
    tl.marks.push_back(m);
  }
  return tl;
}

std::uint64_t steps_done(double t, double start, double step) {
  return t < start ? 0 : static_cast<std::uint64_t>((t - start) / step);
}

}  // namespace

// The H200 run of 2026-11-29: 256 MiB kept per step, steps of a few ms, sampled every 20 ms.
TEST(ProbeGrowth, FastStepsLeakingIsGrowth) {
  auto tl = trial(12, 4.0, 0.005, 0.02, [](double t) {
    return t < 3.5 ? 0 : 6 * GiB + 256 * MiB * steps_done(t, 4.0, 0.005);
  });
  auto g = step_growth(tl);
  EXPECT_TRUE(g.judged) << g.why;
  EXPECT_TRUE(g.grew) << g.why;
  // What the first version used, the timeline classifier, misses it: the trial is too short.
  EXPECT_NE(timeline::classify(tl).verdict, timeline::Verdict::Leak);
}

TEST(ProbeGrowth, SlowStepsLeakingALittleIsGrowth) {
  auto tl = trial(12, 4.0, 0.1, 0.02, [](double t) { return t < 3.5 ? 0 : 6 * GiB + 32 * MiB * steps_done(t, 4.0, 0.1); });
  EXPECT_TRUE(step_growth(tl).grew) << step_growth(tl).why;
}

// Optimizer state at step 1, more cache at step 2, then level: an ordinary job.
TEST(ProbeGrowth, WarmupThenLevelIsNotGrowth) {
  auto tl = trial(12, 4.0, 0.1, 0.02, [](double t) -> std::uint64_t {
    if (t < 3.5) return 0;
    auto k = steps_done(t, 4.0, 0.1);
    return 6 * GiB + (k >= 1 ? 3 * GiB : 0) + (k >= 2 ? 200 * MiB : 0) + (k % 2) * 2 * MiB;
  });
  auto g = step_growth(tl);
  EXPECT_TRUE(g.judged);
  EXPECT_FALSE(g.grew) << g.why;
}

// One larger allocation late in the trial (the allocator cached one more segment) is not a leak.
TEST(ProbeGrowth, OneLateRiseIsNotGrowth) {
  auto tl = trial(12, 4.0, 0.1, 0.02, [](double t) -> std::uint64_t {
    return t < 3.5 ? 0 : 6 * GiB + (steps_done(t, 4.0, 0.1) >= 9 ? GiB : 0);
  });
  EXPECT_FALSE(step_growth(tl).grew);
}

// Grows, then the cache is given back: not a leak.
TEST(ProbeGrowth, GrowthThatFallsBackIsNotGrowth) {
  auto tl = trial(12, 4.0, 0.1, 0.02, [](double t) -> std::uint64_t {
    if (t < 3.5) return 0;
    auto k = steps_done(t, 4.0, 0.1);
    return 6 * GiB + (k < 9 ? 128 * MiB * k : 0);
  });
  EXPECT_FALSE(step_growth(tl).grew);
}

// Small step-to-step wobble under the tolerance, however long, is not growth.
TEST(ProbeGrowth, TinyCreepIsNotGrowth) {
  auto tl = trial(20, 4.0, 0.1, 0.02, [](double t) { return t < 3.5 ? 0 : 6 * GiB + 2 * MiB * steps_done(t, 4.0, 0.1); });
  EXPECT_FALSE(step_growth(tl).grew);
}

// The trial that ran out of memory in its second step: too few steps to judge.
TEST(ProbeGrowth, OomInTheFirstStepsIsNotJudged) {
  auto tl = trial(2, 4.0, 0.1, 0.02, [](double t) { return t < 3.5 ? 0 : 6 * GiB + GiB * steps_done(t, 4.0, 0.1); });
  tl.outcome = timeline::Outcome::Oom;
  auto g = step_growth(tl);
  EXPECT_FALSE(g.judged);
  EXPECT_FALSE(g.grew);
}

TEST(ProbeGrowth, NoMarksOrNoSamples) {
  timeline::Timeline empty;
  EXPECT_FALSE(step_growth(empty).judged);
  auto tl = trial(12, 4.0, 0.1, 0.02, [](double) { return GiB; });
  tl.samples.clear();
  EXPECT_FALSE(step_growth(tl).judged);
}

// The H200 trial of 2026-11-30 (tests/gpu/probe_pytorch.sh, batch 31 of a 14 GiB cap): a job that
// prints "step N" (probe's --step-regex) and steps an optimizer (run's step hook) marks every
// step twice, once untagged and once with its pid. Three steps whose cache grows in the first two
// are warm-up, not six steps of growth: the process is judged on one set of marks.
TEST(ProbeGrowth, StepsMarkedByTheHookAndTheJobsLinesCountOnce) {
  auto tl = trial(3, 4.0, 2.0, 0.02, [](double t) {
    return t < 3.5 ? 0 : t < 6.0 ? 13 * GiB : t < 8.0 ? 13 * GiB + 800 * MiB : 14 * GiB + 700 * MiB;
  });
  timeline::ProcessSeries series;
  series.who.pid = 4242;
  series.who.gpu = 0;
  series.samples = tl.samples;
  tl.processes.push_back(series);
  for (int k = 0; k < 3; ++k) {  // the hook's marks, just before the job's line for the same step
    timeline::Mark m;
    m.t_seconds = 4.0 + (k + 1) * 2.0 - 0.01;
    m.label = "step " + std::to_string(k);
    m.pid = 4242;
    tl.marks.push_back(m);
  }
  std::sort(tl.marks.begin(), tl.marks.end(), [](const auto& a, const auto& b) { return a.t_seconds < b.t_seconds; });
  const auto g = step_growth(tl);
  EXPECT_FALSE(g.grew) << g.why;
  EXPECT_FALSE(g.judged) << g.why;  // three steps: too few after warm-up to tell
}
