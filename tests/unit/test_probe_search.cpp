// The probe's guided search on single jobs (issue 15, issue 30): the edges, leaks, the estimator's
// first jump, OOM messages from a full card, a convex job, the prior's split and the long trials
// near the end. The families are in test_probe_families.cpp, the H200 replays in test_probe_h200.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/probe/guide.hpp"
#include "core/probe/report.hpp"
#include "core/units.hpp"
#include "probe_sim.hpp"

using namespace vramdoc;
using namespace vramdoc::probe;
using namespace vramdoc::probe::sim;

// The H200 job of issue 15 (about 12 s a trial): a limit of 365 took 18 trials.
TEST(ProbeGuidedSearch, IssueFifteenJobTakesFewerTrials) {
  SimJob job;
  job.fixed = 6.08 * GiB;
  job.reach = 139.8 * GiB;
  job.capacity = 139.8 * GiB;
  job.per_item = (job.reach - job.fixed) / 365.5;
  job.sampled_share = 0.98;
  EXPECT_EQ(search(job, plain_limits()).trials().size(), 18U);  // the plain search, as on the H200
  auto s = search(job, guided_limits(job));
  EXPECT_EQ(*s.largest_ok(), 365U);
  std::printf("[probe search] issue 15's job (limit 365): guided %zu trials (%s), plain 18\n", s.trials().size(), sequence(s).c_str());
  EXPECT_LE(s.trials().size(), 9U);
  job.message = true;  // a PyTorch job's OOM says "in use + free": the reach
  s = search(job, guided_limits(job));
  EXPECT_EQ(*s.largest_ok(), 365U);
  std::printf("[probe search] issue 15's job with PyTorch's OOM message: guided %zu trials (%s)\n", s.trials().size(), sequence(s).c_str());
  EXPECT_LE(s.trials().size(), 8U);
}


TEST(ProbeGuidedSearch, LimitsAtTheEdges) {
  SimJob job;
  job.fixed = 150 * GiB;  // too big at 1
  auto s = search(job, guided_limits(job));
  EXPECT_EQ(s.reason(), StopReason::FailsAtStart);
  EXPECT_EQ(s.trials().size(), 1U);
  job.fixed = 1 * GiB, job.per_item = 1 * MiB;  // fits far beyond --max
  s = search(job, guided_limits(job, 256));
  EXPECT_EQ(s.reason(), StopReason::ReachedMax);
  EXPECT_EQ(*s.largest_ok(), 256U);
  EXPECT_LE(s.trials().size(), 4U);
  job.per_item = (job.reach - job.fixed) / 1.5;  // only 1 fits
  s = search(job, guided_limits(job));
  EXPECT_EQ(*s.largest_ok(), 1U);
  EXPECT_EQ(*s.smallest_oom(), 2U);
}


TEST(ProbeGuidedSearch, LeakStopsAtTheFirstGrowingTrial) {
  SimJob job;
  job.leaks_from = 1;
  auto s = search(job, guided_limits(job));
  EXPECT_EQ(s.reason(), StopReason::Leaks);
  EXPECT_EQ(s.trials().size(), 1U);
  job.leaks_from = 100;  // only large values grow (a leak proportional to the batch)
  s = search(job, guided_limits(job));
  EXPECT_EQ(s.reason(), StopReason::Leaks);
  EXPECT_GE(s.trials().back().value, 100U);
}

// Without peaks (no driver) or without the card's capacity there is nothing to steer by: the
// plain doubling and bisection, unchanged.
TEST(ProbeGuidedSearch, WithoutPeaksOrCapacityItDoublesAndBisects) {
  SimJob job;
  auto s = search(job, plain_limits());
  std::vector<std::uint64_t> values;
  for (const auto& t : s.trials()) values.push_back(t.value);
  const std::vector<std::uint64_t> first{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  EXPECT_TRUE(std::equal(first.begin(), first.end(), values.begin()));
}

// With the estimator (probe --config) the first jump comes from its curve, scaled to the trial
// that ran: an estimator 10 % off still finds the exact limit.
TEST(ProbeGuidedSearch, EstimatorCurveGuidesTheFirstJump) {
  SimJob job;
  job.quadratic = 0.2 * MiB;
  auto limits = guided_limits(job);
  limits.estimate_bytes = [job](std::uint64_t v) { return std::optional<double>(1.1 * job.peak(double(v)) - 2 * GiB); };
  auto s = search(job, limits);
  EXPECT_EQ(*s.largest_ok(), job.limit());
  EXPECT_LE(s.trials().size(), 7U);
}


TEST(ProbeGuide, SplitPriorBisectsNearTheGuessAndGallopsFarFromIt) {
  EXPECT_EQ(split_prior(500, 10, 400, 600), 500U);
  EXPECT_EQ(split_prior(500, 10, 499, 501), 500U);
  const auto far = split_prior(500, 10, 600, 100000);  // the guess was too low: the step grows
  EXPECT_GE(far, 690U);  // twice as far from the guess as the bound
  EXPECT_LT(far, 1000U);
}


TEST(ProbeGuide, ReachableBytesFromTheOomMessage) {
  Trial t;
  t.outcome = Outcome::Oom;
  t.detail = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 1.00 GiB is free. "
             "Including non-PyTorch memory, this process has 138.00 GiB memory in use.";
  auto r = reachable_bytes({t});
  ASSERT_TRUE(r);
  EXPECT_NEAR(*r / GiB, 139.0, 0.01);
  t.detail = "CUDA out of memory";
  EXPECT_FALSE(reachable_bytes({t}));
}

// H200, 2026-12-02 (tests/gpu/probe_pytorch.sh beside a JAX job that held most of the card): the
// first OOM's message said in use + free = 5.5 GiB, below the peaks that had run, and the search
// crept 3 4 5 6 under 17x until the cap. Such a reach is not the job's, and a wide bracket is
// bisected, not crept along.
TEST(ProbeGuidedSearch, AnOomMessageBelowTheMeasuredPeaksDoesNotMakeTheSearchCreep) {
  SimJob job;
  job.capacity = 14.04 * GiB, job.reach = 14.04 * GiB;
  job.fixed = 6.58 * GiB, job.per_item = 281 * MiB;  // probe_train.py with its context: limit 27
  job.message = true, job.message_reach = 5.5 * GiB;
  auto limits = guided_limits(job, 256);
  const auto s = search(job, limits);
  std::printf("[probe search] probe_train.py with a small OOM reach: %zu trials (%s)\n", s.trials().size(), sequence(s).c_str());
  EXPECT_EQ(*s.largest_ok(), job.limit());
  EXPECT_LE(s.trials().size(), 7U);
  limits.max_trials = 8, limits.confirm_steps = 50;  // probe's defaults: exact within them
  const auto capped = search(job, limits);
  EXPECT_EQ(capped.reason(), StopReason::Bracketed) << sequence(capped);
}

// The GPU suite's sequence itself: 1 and 2 ran, 17 ran out of memory with a message whose in use
// + free (5.5 GiB) is below their peaks; the bracket 2-17 is bisected (geometrically when wide),
// never crept along from its low end (it went 3 4 5 6).
TEST(ProbeGuidedSearch, AWideBracketIsBisected) {
  SimJob job;
  job.capacity = 14.04 * GiB, job.reach = 14.04 * GiB;
  job.fixed = 6.58 * GiB, job.per_item = 281 * MiB;
  SearchLimits limits = guided_limits(job, 256);
  Search s(limits);
  s.record(job.run(1));
  s.record(job.run(2));
  s.record(pytorch_oom(17, "2.00 GiB", "0.50 GiB", "5.00 GiB"));
  // That message is a full card (5 GiB held, 0.5 GiB free of 139.8): 17 is tried again, and runs.
  ASSERT_EQ(s.next(), std::optional<std::uint64_t>(17)) << sequence(s);
  s.record(job.run(17));
  // then a real one, at the job's own limit
  s.record(pytorch_oom(64, "2.00 GiB", "120.00 GiB", "13.90 GiB",
                       " Of the allocated memory 13.10 GiB is allocated by PyTorch, and 0.30 GiB is reserved by PyTorch but unallocated."));
  ASSERT_EQ(s.smallest_oom(), std::optional<std::uint64_t>(64)) << sequence(s);
  for (int i = 0; i < 3; ++i) {
    const auto v = s.next();
    if (!v || s.confirming()) break;  // bracketed already
    const auto lo = *s.largest_ok(), hi = *s.smallest_oom();
    EXPECT_GE(*v, lo + (hi - lo) / 4) << "crept: " << sequence(s);
    Trial t = job.run(*v);
    s.record(t);
  }
  EXPECT_EQ(s.largest_ok(), std::optional<std::uint64_t>(job.limit())) << sequence(s);
}

// H200, 2026-12-02: ResNet-50 held to 16 GiB peaked at 16.4-16.7 GiB from batch 345 on (the
// allocator freeing its cache), and the search crawled 345 350 355 357 361 with no OOM in its 8
// trials. Saturated peaks are left out of the model: the steps grow and the limit is reached.
TEST(ProbeGuidedSearch, SaturatedPeaksDoNotMakeTheSearchCrawl) {
  SimJob job;
  job.capacity = 16 * GiB, job.fixed = 1.27 * GiB, job.per_item = 44 * MiB;
  job.saturates_at = 16.6 * GiB, job.reach = 16.6 * GiB, job.need_share = 0.9;  // limit 399
  auto limits = guided_limits(job);
  const auto s = search(job, limits);
  std::printf("[probe search] saturating peaks (ResNet-50's shape, limit %llu): %zu trials (%s)\n",
              static_cast<unsigned long long>(job.limit()), s.trials().size(), sequence(s).c_str());
  EXPECT_EQ(*s.largest_ok(), job.limit());
  EXPECT_LE(s.trials().size(), 12U);  // the crawl: one value in 1-2 % a trial (16 without the cap)
  // Within probe's 8 trials the limit is bracketed (an OOM above, within 10 % of the answer); the
  // saturated peaks cannot say where in the bracket it lies.
  limits.max_trials = 8, limits.confirm_steps = 50;
  const auto capped = search(job, limits);
  ASSERT_TRUE(capped.smallest_oom()) << sequence(capped);
  EXPECT_LE(double(*capped.smallest_oom()), 1.1 * double(*capped.largest_ok())) << sequence(capped);
  EXPECT_LT(job.limit(), *capped.smallest_oom());
}

// H200, 2026-12-02 (the GPU suite, probe beside another lane): batch 17 ran out of memory with
// "93.56 MiB is free" of the card while the trial held 2.2 GiB of its 16 GiB: another process had
// filled the card. The search took it as the limit and reported 16; 17 ran when tried again.
TEST(ProbeGuidedSearch, AnOomFromAFullCardIsTriedAgainNotTakenAsTheLimit) {
  SimJob job;
  job.capacity = 16 * GiB, job.reach = 16 * GiB;
  job.fixed = 6.2 * GiB, job.per_item = 300 * MiB;
  Search s(guided_limits(job, 256));
  s.record(job.run(1));
  s.record(job.run(2));
  const Trial full = pytorch_oom(17, "272.00 MiB", "93.56 MiB", "2.19 GiB");
  s.record(full);
  EXPECT_FALSE(s.smallest_oom()) << "a full card taken as the job's limit: " << sequence(s);
  EXPECT_TRUE(s.trials().back().card_full);
  ASSERT_EQ(s.next(), std::optional<std::uint64_t>(17));
  s.record(full);  // the card is full again: now it counts
  EXPECT_EQ(s.smallest_oom(), std::optional<std::uint64_t>(17)) << sequence(s);
}

// Issue 30, H200 2026-12-02 (tests/gpu/probe_pytorch.sh alone, 14.04 GiB): 1 2 17 ran, then the
// fitted line (0.23 GiB an item) put the limit at 33, but above 17 each item took 0.36 GiB. 33 31
// 28 ran out of memory, 23 ran, confirmation: "fits at least 23" with 24-27 untried, 24 ran. An
// OOM that contradicts the model must shrink its trust: the exact limit within probe's 8 trials.
TEST(ProbeGuidedSearch, AConvexJobIsFoundExactlyWithinEightTrials) {
  SimJob job;
  job.capacity = 14.04 * GiB, job.reach = 14.04 * GiB;
  job.fixed = 6.45 * GiB, job.per_item = 0.23 * GiB;
  job.step_at = 2, job.step_bytes = 0.14 * GiB;       // batch 1 to 2: 0.37 GiB (the fit's first slope sent it to 17)
  job.bend_at = 17, job.bend_per_item = 0.13 * GiB;  // 0.36 GiB an item above 17: limit 26
  // Its OOM message said 126 GiB free: the device's, not the cap's, so it tells no reach (job.message off).
  auto limits = guided_limits(job, 256);
  limits.max_trials = 8, limits.confirm_steps = 50;  // probe's defaults
  const auto s = search(job, limits);
  std::printf("[probe search] probe_pytorch's convex job (limit %llu): %zu trials (%s)\n",
              static_cast<unsigned long long>(job.limit()), s.trials().size(), sequence(s).c_str());
  ASSERT_EQ(s.reason(), StopReason::Bracketed) << sequence(s);
  EXPECT_EQ(*s.largest_ok(), job.limit()) << sequence(s);
  EXPECT_LE(s.trials().size(), 8U) << sequence(s);
}

// Round 4: a trial in a narrow bracket runs the confirmation's length; when it is the answer it
// needs no confirmation trial, and the cap keeps no trial back for one.
TEST(ProbeSearchLongTrials, ATrialNearTheBracketsEndIsItsOwnConfirmation) {
  SearchLimits limits;
  limits.max = 256, limits.max_trials = 0, limits.confirm_steps = 50;  // no capacity: doubling and bisection
  Search s(limits);
  auto ran = [](std::uint64_t v, int steps) {
    Trial t;
    t.value = v, t.peak_bytes = v * MiB, t.measured = true, t.steps = steps;
    return t;
  };
  auto oom = [](std::uint64_t v) {
    Trial t;
    t.value = v, t.outcome = Outcome::Oom;
    return t;
  };
  s.record(ran(1, 10));
  EXPECT_FALSE(s.runs_long());  // no bracket yet
  s.record(ran(2, 10)), s.record(ran(4, 10)), s.record(ran(8, 10)), s.record(oom(16));
  EXPECT_TRUE(s.runs_long());   // 8-16: at most 8 values
  ASSERT_EQ(s.next(), std::optional<std::uint64_t>(12));
  s.record(oom(12));
  ASSERT_EQ(s.next(), std::optional<std::uint64_t>(10));
  s.record(ran(10, 50));        // ran long
  ASSERT_EQ(s.next(), std::optional<std::uint64_t>(11));
  EXPECT_FALSE(s.confirming());
  s.record(oom(11));
  EXPECT_EQ(s.reason(), StopReason::Bracketed);
  EXPECT_EQ(s.confirmed(), std::optional<std::uint64_t>(10));
  EXPECT_FALSE(s.next()) << "no confirmation trial: 10 ran the confirmation's length";
  // The last two trials the cap allows run long; an answer that ran long leaves the cap's last trial to the search.
  limits.max_trials = 4;
  Search capped(limits);
  capped.record(ran(1, 10));
  EXPECT_FALSE(capped.runs_long());
  capped.record(ran(2, 10));
  EXPECT_TRUE(capped.runs_long());  // the 3rd of 4
  capped.record(ran(4, 50));
  EXPECT_EQ(capped.reason(), StopReason::Running) << "4 ran long: no trial kept back for its confirmation";
  EXPECT_TRUE(capped.runs_long());
}
