// Issue 30: a trial fits only when its memory has settled; the answer is confirmed by a longer run;
// at most 8 trials; a trial without memory readings cannot fit.
#include <gtest/gtest.h>

#include <vector>

#include "core/probe/guide.hpp"
#include "core/probe/judge.hpp"
#include "core/probe/report.hpp"
#include "core/probe/settle.hpp"
#include "core/units.hpp"

using namespace vramdoc;
using namespace vramdoc::probe;

namespace {

// A trial's recording: one step every 0.1 s, the driver's number and the step hook's reserved
// bytes at each step end as given (the driver sees the context on top of what is reserved).
timeline::Timeline recording(const std::vector<double>& reserved_gib, double context_gib = 0.5) {
  timeline::Timeline tl;
  for (std::size_t i = 0; i < reserved_gib.size(); ++i) {
    const double t = 0.1 * static_cast<double>(i + 1);
    const auto reserved = static_cast<std::uint64_t>(reserved_gib[i] * GiB);
    tl.samples.push_back({t - 0.01, reserved + static_cast<std::uint64_t>(context_gib * GiB), std::nullopt, std::nullopt, std::nullopt});
    tl.marks.push_back({t, "step " + std::to_string(i), std::nullopt, reserved, 4242});
  }
  return tl;
}

Trial ran(std::uint64_t value, int steps, std::optional<int> settled_at, double peak_gib) {
  Trial t;
  t.value = value;
  t.steps = steps;
  t.settled_at = settled_at;
  t.measured = true;
  t.peak_bytes = static_cast<std::uint64_t>(peak_gib * GiB);
  return t;
}

Trial out_of_memory(std::uint64_t value, int steps) {
  Trial t;
  t.value = value;
  t.outcome = Outcome::Oom;
  t.steps = steps;
  t.detail = "CUDA out of memory";
  return t;
}

}  // namespace

// probe II (issue 30): the step hook's `peak=` (the allocator's own peak of live tensors) becomes
// the trial's allocated peak, the largest over its marks; without the field it stays unknown.
TEST(ProbeSettle, TheAllocatorsPeakIsTheLargestTheMarksReported) {
  auto tl = recording({6, 9, 9.2, 9.2, 9.2, 9.2, 9.2});
  EXPECT_FALSE(settling(tl).allocated_peak_bytes) << "no peak= in the lines: unknown, not 0";
  const std::uint64_t peaks[] = {5 * GiB, 8 * GiB, 8 * GiB + 5 * MiB, 8 * GiB + 5 * MiB, 8 * GiB + 5 * MiB, 8 * GiB + 5 * MiB, 8 * GiB + 5 * MiB};
  for (std::size_t i = 0; i < tl.marks.size(); ++i) tl.marks[i].allocated_peak_bytes = peaks[i];
  const auto s = settling(tl);
  ASSERT_TRUE(s.allocated_peak_bytes);
  EXPECT_EQ(*s.allocated_peak_bytes, 8 * GiB + 5 * MiB);
  Trial t;
  judge_trial(t, tl, TrialEnd{}, SettleRule{});
  EXPECT_EQ(t.allocated_peak_bytes, s.allocated_peak_bytes);
}

TEST(ProbeSettle, FlatAfterTheOptimizerStateIsSettled) {
  // AdamW makes its state in the first step: memory rises once, then holds.
  const auto s = settling(recording({6, 9, 9.2, 9.2, 9.2, 9.2, 9.2, 9.2, 9.2}));
  ASSERT_TRUE(s.settled_at);
  EXPECT_EQ(*s.settled_at, 3);
  EXPECT_EQ(s.steps, 9);
  EXPECT_TRUE(s.has_reserved);
}

// Issue 30's job: the cache still grew at step 4 (batch 28 "fitted" and ran out at step 17).
TEST(ProbeSettle, CacheStillGrowingAtStepFourIsNotSettled) {
  EXPECT_FALSE(settling(recording({6, 9, 9.5, 10})).settled_at);
  EXPECT_FALSE(settling(recording({6, 9, 9.5, 10, 10.3, 10.6, 10.9, 11.2, 11.5})).settled_at);
  // Flat for fewer than K steps after the last change: not yet.
  EXPECT_FALSE(settling(recording({6, 9, 10, 10, 10, 10, 10})).settled_at);
  EXPECT_TRUE(settling(recording({6, 9, 10, 10, 10, 10, 10, 10})).settled_at);
}

TEST(ProbeSettle, ChangesWithinTheToleranceAreFlat) {
  // 2 MiB either way on 10 GiB (the driver's granule, a small-pool segment): flat.
  const double mib = 1.0 / 1024;
  const auto s = settling(recording({6, 10, 10 + 2 * mib, 10, 10 - 2 * mib, 10, 10 + 2 * mib}));
  ASSERT_TRUE(s.settled_at);
  EXPECT_EQ(*s.settled_at, 2);
}

TEST(ProbeSettle, TheDriversNumberMustSettleToo) {
  auto tl = recording({6, 9, 9, 9, 9, 9, 9, 9, 9});
  for (std::size_t i = 0; i < tl.samples.size(); ++i) tl.samples[i].process_used_bytes += i * 256 * MiB;  // outside the allocator
  EXPECT_FALSE(settling(tl).settled_at);
}

TEST(ProbeSettle, WithoutTheStepHookTheDriversNumberDecides) {
  auto tl = recording({6, 9, 9, 9, 9, 9, 9, 9});
  for (auto& m : tl.marks) m.reserved_bytes.reset(), m.pid.reset();
  const auto s = settling(tl);
  EXPECT_FALSE(s.has_reserved);
  ASSERT_TRUE(s.settled_at);
  EXPECT_EQ(*s.settled_at, 2);
}

// A recording without per-process series holds the step hook's marks and the job's own step
// lines: counted together, every step would count twice.
TEST(ProbeSettle, HookMarksAndStepLinesAreNotCountedTwice) {
  auto tl = recording({6, 9, 9, 9, 9, 9, 9, 9});
  const auto hooked = tl.marks;
  for (const auto& m : hooked) tl.marks.push_back({m.t_seconds + 0.001, m.label, std::nullopt, std::nullopt, std::nullopt});
  EXPECT_EQ(settling(tl).steps, 8);
}

// H200, 2026-12-02 (tests/gpu/probe_pytorch.sh): the job ran 3 steps and exited 0; with K = 5 no
// trial "settled". A job that ends by itself ran to its end: settled from its last change.
TEST(ProbeSettle, AJobThatEndsByItselfAfterItsLastStepHasSettled) {
  const auto tl = recording({6, 9, 9});
  EXPECT_FALSE(settling(tl).settled_at);
  EXPECT_EQ(settling(tl).flat_from, 2);
  Trial ended;
  judge_trial(ended, tl, TrialEnd{0, false, "", 3});
  EXPECT_EQ(ended.outcome, Outcome::Ok);
  EXPECT_TRUE(ended.ran_to_end);
  EXPECT_EQ(ended.settled_at, 2);
  // Stopped by probe after 3 steps (--max-steps 3): it did not end by itself, not settled.
  Trial stopped;
  judge_trial(stopped, tl, TrialEnd{143, true, "", 3});
  EXPECT_EQ(stopped.outcome, Outcome::Ok);
  EXPECT_FALSE(stopped.ran_to_end);
  EXPECT_FALSE(stopped.settled_at);
  // The report says how it ran.
  ended.value = 6;
  ended.measured = true;
  SearchLimits limits;
  limits.max_trials = 0, limits.confirm_steps = 0;
  Search s(limits);
  s.record(ended);
  s.record(out_of_memory(7, 2));
  EXPECT_EQ(verdict_line(conclude(s, "batch", 16 * GiB, 0.1, false)),
            "fits up to batch 6 (ran 3 steps to the job's end, flat from step 2); batch 7 ran out of memory at step 3");
}

// What the driver charges beyond the allocator's reserved bytes (the CUDA context) at step ends.
TEST(ProbeSettle, TheMemoryOutsideTheAllocatorIsMeasured) {
  const auto s = settling(recording({6, 9, 9, 9}, 0.75));
  ASSERT_TRUE(s.outside_allocator_bytes);
  EXPECT_NEAR(static_cast<double>(*s.outside_allocator_bytes) / GiB, 0.75, 0.001);
  auto tl = recording({6, 9, 9, 9});
  for (auto& m : tl.marks) m.reserved_bytes.reset();
  EXPECT_FALSE(settling(tl).outside_allocator_bytes);  // no step hook: unknown, not 0
}

TEST(ProbeSettle, NoReadingsIsNotMeasured) {
  auto tl = recording({6, 9, 9, 9, 9, 9, 9, 9});
  tl.samples.clear();
  const auto s = settling(tl);
  EXPECT_FALSE(s.measured);
  EXPECT_FALSE(s.settled_at);
  EXPECT_NE(s.why.find("no memory readings"), std::string::npos);
}

// Issue 30 / 32 item 3: a trial that ran with no memory readings cannot be said to fit; before,
// probe doubled and bisected without them and recommended the largest value minus the margin.
TEST(ProbeSearch, ATrialWithoutReadingsCannotFit) {
  Search s({});
  Trial t;
  t.value = 1;
  t.steps = 10;
  s.record(t);
  EXPECT_EQ(s.reason(), StopReason::Unmeasured);
  EXPECT_FALSE(s.next());
  const auto r = conclude(s, "batch", 16 * GiB, 0.1, false);
  EXPECT_EQ(verdict_code(r), "unmeasured");
  EXPECT_FALSE(r.recommendation.value);
  EXPECT_NE(verdict_line(r).find("no memory readings"), std::string::npos);
}

TEST(ProbeSearch, TheAnswerIsConfirmedByALongerRunBeforeItIsReported) {
  SearchLimits limits;
  limits.max_trials = 0;
  Search s(limits);
  s.record(ran(27, 14, 9, 14.2));
  s.record(out_of_memory(28, 16));
  EXPECT_EQ(s.reason(), StopReason::Bracketed);
  ASSERT_TRUE(s.confirming());
  EXPECT_EQ(*s.next(), 27U);
  auto unconfirmed = conclude(s, "batch", 16 * GiB, 0.1, false);
  EXPECT_EQ(verdict_code(unconfirmed), "incomplete");
  Trial confirm = ran(27, 50, 9, 14.3);
  confirm.confirmation = true;
  s.record(confirm);
  EXPECT_FALSE(s.next());
  EXPECT_EQ(*s.confirmed(), 27U);
  const auto r = conclude(s, "batch", 16 * GiB, 0.1, false);
  EXPECT_EQ(verdict_line(r), "fits up to batch 27 (ran 50 steps, settled at step 9); batch 28 ran out of memory at step 17");
}

// A confirmation that runs out of memory later (the cache grew past the first trial's steps)
// moves the answer below it.
TEST(ProbeSearch, AConfirmationThatRunsOutReopensTheSearchBelowIt) {
  SearchLimits limits;
  limits.max_trials = 0;
  Search s(limits);
  s.record(ran(26, 12, 6, 13.5));
  s.record(ran(28, 12, 6, 14.6));
  s.record(out_of_memory(29, 3));
  ASSERT_TRUE(s.confirming());
  Trial failed = out_of_memory(28, 16);
  failed.confirmation = true;
  s.record(failed);
  EXPECT_EQ(*s.smallest_oom(), 28U);
  EXPECT_EQ(*s.largest_ok(), 26U);
  EXPECT_EQ(s.reason(), StopReason::Running);
  EXPECT_FALSE(s.confirming());
  EXPECT_EQ(*s.next(), 27U);
}

// An OOM below a value that ran (dynamic shapes) leaves no answer above it.
TEST(ProbeSearch, AnOomBelowAValueThatRanMovesTheAnswerBelowIt) {
  SearchLimits limits;
  limits.max_trials = 0, limits.confirm_steps = 0;
  Search s(limits);
  s.record(ran(10, 12, 6, 8));
  s.record(ran(20, 12, 6, 12));
  s.record(out_of_memory(15, 30));
  EXPECT_EQ(*s.largest_ok(), 10U);
  EXPECT_EQ(*s.smallest_oom(), 15U);
  EXPECT_EQ(s.reason(), StopReason::Running);
}

TEST(ProbeSearch, AtMostEightTrialsTheConfirmationIncluded) {
  SearchLimits limits;  // no capacity: doubling and bisection, the slowest search
  Search s(limits);
  auto job = [](std::uint64_t v) { return v <= 40 ? ran(v, 12, 6, 1) : out_of_memory(v, 2); };
  while (auto v = s.next()) {
    Trial t = job(*v);
    t.confirmation = s.confirming();
    if (t.confirmation) t.steps = 50;
    s.record(t);
  }
  EXPECT_EQ(s.trials().size(), 8U);
  EXPECT_EQ(s.reason(), StopReason::TrialsSpent);
  EXPECT_EQ(*s.confirmed(), 32U);
  const auto r = conclude(s, "batch", std::nullopt, 0.1, false);
  // H200, 2026-12-02: the cap ended a search at "fits up to 6" with 7-16 untried, and the JSON
  // said fits_up_to: the open bracket is said in the verdict, the line and a field.
  EXPECT_EQ(verdict_code(r), "fits_at_least");
  EXPECT_EQ(verdict_line(r), "fits up to batch 32 (ran 50 steps, settled at step 6); 33-63 untried (the 8 trials spent); "
                             "batch 64 ran out of memory at step 3");
  const auto j = to_json(r);
  EXPECT_EQ(j["untried"]["first"], 33);
  EXPECT_EQ(j["untried"]["last"], 63);
}

// The cap spent before any trial ran out of memory: everything above the answer up to --max is untried.
TEST(ProbeSearch, TrialsSpentWithoutAnOomLeavesTheRestUntried) {
  SearchLimits limits;
  limits.max = 4096, limits.max_trials = 4;
  Search s(limits);
  while (auto v = s.next()) {
    Trial t = ran(*v, 12, 6, 1);
    t.confirmation = s.confirming();
    s.record(t);
  }
  const auto r = conclude(s, "batch", std::nullopt, 0.1, false);
  EXPECT_EQ(verdict_code(r), "fits_at_least");
  EXPECT_EQ(verdict_line(r), "fits up to batch 4 (ran 12 steps, settled at step 6); 5-4096 untried (the 4 trials spent); none ran out of memory");
  EXPECT_EQ(to_json(r)["untried"]["last"], 4096);
  Search bracketed(limits);
  bracketed.record(ran(4, 60, 6, 1));
  bracketed.record(out_of_memory(5, 1));
  EXPECT_TRUE(to_json(conclude(bracketed, "batch", std::nullopt, 0.1, false))["untried"].is_null());
}

// A trial that already ran the confirmation's length needs no second run.
TEST(ProbeSearch, AnAnswerThatRanLongEnoughIsItsOwnConfirmation) {
  SearchLimits limits;
  limits.max_trials = 0;
  Search s(limits);
  s.record(ran(27, 60, 40, 14.2));
  s.record(out_of_memory(28, 16));
  EXPECT_FALSE(s.confirming());
  EXPECT_EQ(*s.confirmed(), 27U);
}

// A job held to 16 GiB of a 140 GiB card (set_per_process_memory_fraction) prints PyTorch's
// message with the device's free memory: in use + free is the card's 137 GiB, not the job's 16.
// Taken as the job's reach, it put the limit 8x too high.
TEST(ProbeGuide, AnOomMessageOfTheWholeDeviceIsNotTheJobsReach) {
  Trial t = out_of_memory(29, 1);
  t.detail = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB "
             "of which 121.20 GiB is free. Including non-PyTorch memory, this process has 16.50 GiB memory in use. 16.00 GiB allowed; "
             "Of the allocated memory 15.50 GiB is allocated by PyTorch.";
  EXPECT_FALSE(reachable_bytes({t}, 16.0 * GiB));
  ASSERT_TRUE(reachable_bytes({t}, 140.0 * GiB));  // the whole card: the message's figures are the job's
  EXPECT_NEAR(*reachable_bytes({t}, 140.0 * GiB) / GiB, 137.7, 0.01);
}
