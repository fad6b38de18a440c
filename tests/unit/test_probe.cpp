#include <gtest/gtest.h>

#include <functional>

#include "core/probe/report.hpp"
#include "core/units.hpp"

using namespace vramdoc;
using namespace vramdoc::probe;

namespace {

// Runs a whole search from `start` up to `max` (no card capacity: doubling and bisection) against a
// simulated job: peak(b) = fixed + per_item * b, OOM above capacity.
Search simulate(std::uint64_t start, std::uint64_t max, const std::function<Trial(std::uint64_t)>& job) {
  SearchLimits limits;
  limits.start = start, limits.max = max;
  limits.max_trials = 0, limits.confirm_steps = 0;  // the search alone (the cap and the confirmation: test_probe_settle.cpp)
  Search search(limits);
  int guard = 0;
  while (auto v = search.next()) {
    search.record(job(*v));
    if (++guard > 100) break;
  }
  return search;
}

std::function<Trial(std::uint64_t)> linear_job(double fixed, double per_item, double capacity) {
  return [=](std::uint64_t b) {
    Trial t;
    t.value = b;
    double peak = fixed + per_item * static_cast<double>(b);
    if (peak > capacity) {
      t.outcome = Outcome::Oom;
      t.detail = "CUDA out of memory";
    } else {
      t.peak_bytes = static_cast<std::uint64_t>(peak);
      t.measured = true;
    }
    return t;
  };
}

}  // namespace

TEST(ProbeSearch, FindsTheExactLargestBatch) {
  // 10 GiB fixed + 1.5 GiB per item on 80 GiB: batch 46 fits (79 GiB), 47 does not (80.5 GiB).
  auto s = simulate(1, 4096, linear_job(10.0 * GiB, 1.5 * GiB, 80.0 * GiB));
  EXPECT_EQ(s.reason(), StopReason::Bracketed);
  EXPECT_EQ(*s.largest_ok(), 46U);
  EXPECT_EQ(*s.smallest_oom(), 47U);
  EXPECT_LE(s.trials().size(), 14U);  // doubling to 64, then bisecting 32..64
}

TEST(ProbeSearch, TooBigAtStart) {
  auto s = simulate(1, 4096, linear_job(90.0 * GiB, 1.0 * GiB, 80.0 * GiB));
  EXPECT_EQ(s.reason(), StopReason::FailsAtStart);
  EXPECT_EQ(s.trials().size(), 1U);
  auto r = conclude(s, "batch", 80 * GiB, 0.1, false);
  EXPECT_EQ(verdict_code(r), "too_big");
  EXPECT_FALSE(r.recommendation.value);
}

TEST(ProbeSearch, StopsAtMax) {
  auto s = simulate(1, 40, linear_job(1.0 * GiB, 0.01 * GiB, 80.0 * GiB));
  EXPECT_EQ(s.reason(), StopReason::ReachedMax);
  EXPECT_EQ(*s.largest_ok(), 40U);
  EXPECT_EQ(s.trials().back().value, 40U);
}

TEST(ProbeSearch, LeakStopsTheSearchAndIsNotAMaxBatch) {
  auto leaky = [](std::uint64_t b) {
    Trial t;
    t.value = b;
    t.peak_bytes = 5 * GiB;
    t.measured = true;
    t.memory_grew = b >= 4;
    return t;
  };
  auto s = simulate(1, 4096, leaky);
  EXPECT_EQ(s.reason(), StopReason::Leaks);
  auto r = conclude(s, "batch", 80 * GiB, 0.1, false);
  EXPECT_EQ(verdict_code(r), "leak");
  EXPECT_FALSE(r.recommendation.value);
}

TEST(ProbeSearch, OtherFailureIsNotAnOom) {
  auto bad_flag = [](std::uint64_t b) {
    Trial t;
    t.value = b;
    t.outcome = Outcome::Failed;
    t.exit_code = 2;
    t.detail = "error: unrecognized arguments: --batch-sise";
    return t;
  };
  auto s = simulate(1, 4096, bad_flag);
  EXPECT_EQ(s.reason(), StopReason::OtherFailure);
  EXPECT_EQ(verdict_code(conclude(s, "batch", std::nullopt, 0.1, false)), "other_failure");
}

TEST(ProbeFit, RecoversLinearModel) {
  auto s = simulate(1, 4096, linear_job(10.0 * GiB, 1.5 * GiB, 80.0 * GiB));
  auto fit = fit_peaks(s.trials());
  ASSERT_TRUE(fit);
  EXPECT_TRUE(fit->linear());
  EXPECT_NEAR(fit->fixed_bytes / GiB, 10.0, 1e-6);
  EXPECT_NEAR(fit->per_item_bytes / GiB, 1.5, 1e-6);
}

TEST(ProbeFit, DetectsQuadraticGrowth) {
  auto quad = [](std::uint64_t s) {
    Trial t;
    t.value = s;
    double x = static_cast<double>(s);
    t.peak_bytes = static_cast<std::uint64_t>(2.0 * GiB + 1e5 * x + 40.0 * x * x);
    t.measured = true;
    return t;
  };
  std::vector<Trial> trials;
  for (std::uint64_t s : {128, 256, 512, 1024, 2048, 4096}) trials.push_back(quad(s));
  auto fit = fit_peaks(trials);
  ASSERT_TRUE(fit);
  EXPECT_FALSE(fit->linear());
  EXPECT_NEAR(*fit->quadratic_bytes, 40.0, 1.0);
}

TEST(ProbeFit, NeedsTwoValues) {
  std::vector<Trial> one(1);
  one[0].peak_bytes = GiB;
  EXPECT_FALSE(fit_peaks(one));
}

// 90 % of 80 GiB = 72 GiB: batch 41 (71.5 GiB) keeps the margin. The plain search ran 40 and 44,
// not 41; before 2026-12-02 only values that ran were recommended, and the jump past the margin
// left the H200's recommendations far below the limit (ResNet-50: answer 361, recommended 10).
TEST(ProbeRecommend, KeepsTheMarginBetweenValuesThatRan) {
  auto s = simulate(1, 4096, linear_job(10.0 * GiB, 1.5 * GiB, 80.0 * GiB));
  auto r = conclude(s, "batch", 80 * GiB, 0.1, false);
  ASSERT_TRUE(r.recommendation.value);
  EXPECT_EQ(*r.recommendation.value, 41U);
  bool ran_above = false, ran_below = false;
  for (const auto& t : s.trials()) {
    ran_above = ran_above || (t.outcome == Outcome::Ok && t.value > 41);
    ran_below = ran_below || (t.outcome == Outcome::Ok && t.value <= 41);
  }
  EXPECT_TRUE(ran_above && ran_below);  // interpolated, not extrapolated
  EXPECT_NE(r.recommendation.basis.find("interpolated between 40"), std::string::npos) << r.recommendation.basis;
}

// H200, 2026-12-02 (issue 30, item 4): the driver's peak is the allocator's bytes plus the CUDA
// context; the margin is kept on what the allocator controls, not on the context.
TEST(ProbeRecommend, TheMarginIsOnTheAllocatorsPartNotOnTheContext) {
  std::vector<Trial> trials;
  for (std::uint64_t b : {1, 10, 20, 30}) {  // 4 GiB of context + 2 GiB of weights + 0.5 GiB a batch item
    Trial t;
    t.value = b;
    t.measured = true;
    t.peak_bytes = static_cast<std::uint64_t>((6.0 + 0.5 * static_cast<double>(b)) * GiB);
    t.outside_allocator_bytes = 4 * GiB;
    trials.push_back(t);
  }
  // The allocator can have 16 - 4 = 12 GiB; 10 % of it kept free: a peak of at most 14.8 GiB,
  // batch 17 (10 % of the whole card, 14.4 GiB, said 16).
  const auto rec = recommend(trials, 16 * GiB, 0.1);
  ASSERT_TRUE(rec.value);
  EXPECT_EQ(*rec.value, 17U);
  EXPECT_NE(rec.basis.find("4.00 GiB outside the allocator"), std::string::npos) << rec.basis;
  EXPECT_DOUBLE_EQ(allowed_peak_bytes(16 * GiB, 0.1, 4 * GiB), 14.8 * GiB);
  EXPECT_DOUBLE_EQ(allowed_peak_bytes(16 * GiB, 0.1, 0), 0.9 * 16 * GiB);
  // Never above the answer, and nothing when even the smallest value peaked above the margin.
  EXPECT_EQ(*recommend(trials, 16 * GiB, 0.1, 10).value, 10U);
  EXPECT_FALSE(recommend(trials, 6 * GiB, 0.1).value);
}

// Issue 30 (and 32, item 3): without a measured peak nothing says what headroom a value keeps;
// before, probe stepped down from the largest value that ran by the margin: a value from nothing.
TEST(ProbeRecommend, WithoutPeaksNothingIsRecommended) {
  std::vector<Trial> trials(2);
  trials[0].value = 32;
  trials[1].value = 64;
  trials[1].outcome = Outcome::Oom;
  auto rec = recommend(trials, std::nullopt, 0.25);
  EXPECT_FALSE(rec.value);
  EXPECT_NE(rec.basis.find("no trial's peak memory was measured"), std::string::npos);
  rec = recommend(trials, 80 * GiB, 0.25);
  EXPECT_FALSE(rec.value);
}

TEST(ProbeReport, RendersTextJsonAndSvg) {
  auto s = simulate(1, 4096, linear_job(10.0 * GiB, 1.5 * GiB, 80.0 * GiB));
  auto r = conclude(s, "batch", 80 * GiB, 0.1, false);
  auto text = render_text(r);
  EXPECT_NE(text.find("fits up to batch 46 (no steps marked); batch 47 ran out of memory at step 1"), std::string::npos);
  auto j = to_json(r);
  EXPECT_EQ(j["verdict"], "fits_up_to");
  EXPECT_EQ(j["largest_ok"], 46);
  auto svg = render_svg(r);
  EXPECT_EQ(svg.rfind("<svg", 0), 0U);
  EXPECT_NE(svg.find("card memory"), std::string::npos);
}

// Pins the GPU run of 2026-11-29: the trial that ran out of memory had grown within its steps
// (optimizer state), and the search wrongly stopped with "leak".
TEST(ProbeSearch, GrowthInAnOomTrialIsNotALeak) {
  auto job = [](std::uint64_t b) {
    Trial t;
    t.value = b;
    if (b > 20) {
      t.outcome = Outcome::Oom;
      t.memory_grew = true;
    } else {
      t.peak_bytes = b * GiB;
      t.measured = true;
    }
    return t;
  };
  auto s = simulate(1, 4096, job);
  EXPECT_EQ(s.reason(), StopReason::Bracketed);
  EXPECT_EQ(*s.largest_ok(), 20U);
}

// The text report's table at 80 columns (issue 30, probe II): with the allocator's peak column a
// four-digit confirmation ("1843 (confirm)", llama's {seq} on the H200), 100 steps and 194.2 s made
// a row of 84 columns, wrapped on an 80-column terminal. Every table line stays within 80 (the
// verdict and the recommendation above and below it are prose, wrapped by the terminal).
TEST(ProbeReport, TheTableWithTheAllocatedColumnFitsEightyColumns) {
  ProbeReport r;
  r.parameter = "batch", r.reason = StopReason::Bracketed, r.capacity_bytes = 10 * GiB;
  for (const std::uint64_t v : {1ULL, 1200ULL, 1843ULL, 1843ULL, 1879ULL}) {
    Trial t;
    t.value = v, t.steps = 100, t.settled_at = 12, t.ran_to_end = true, t.seconds = 194.2, t.measured = true;
    t.peak_bytes = 9 * GiB + v * MiB / 4, t.allocated_peak_bytes = 8 * GiB + v * MiB / 4;
    t.confirmation = r.trials.size() == 3;
    if (v == 1879) t.outcome = Outcome::Oom, t.steps = 1, t.settled_at.reset(), t.peak_bytes.reset(), t.allocated_peak_bytes.reset();
    r.trials.push_back(t);
  }
  const auto text = render_text(r);
  ASSERT_NE(text.find("alloc GiB"), std::string::npos) << text;
  const auto table = text.substr(text.find("\n\n") + 2, text.find("\n\n", text.find("\n\n") + 2) - text.find("\n\n") - 2);
  std::size_t lines = 0;
  for (std::size_t at = 0; at < table.size();) {
    const auto end = table.find('\n', at);
    const auto line = table.substr(at, end - at);
    EXPECT_LE(line.size(), 80U) << line;
    ++lines, at = end == std::string::npos ? table.size() : end + 1;
  }
  EXPECT_EQ(lines, 7U) << table;  // the header, its rule, five trials
}

// A job whose shapes vary (H200 2026-12-02, qwen-dyn: random lengths): the answer's 50-step
// confirmation peaked above its 12-step trial and settled later; the report says the largest
// value is the edge of the batches seen and points at the recommended one. A confirmation that
// repeats its trial's peak says nothing.
TEST(ProbeReport, AConfirmationThatRoseAfterItsTrialSettledIsSaid) {
  ProbeReport r;
  r.parameter = "batch", r.reason = StopReason::Bracketed, r.capacity_bytes = 16 * GiB, r.confirm_steps = 50, r.confirmed = 7;
  r.largest_ok = 7, r.smallest_oom = 8;
  auto trial = [](std::uint64_t v, std::uint64_t peak, int steps, int settled, bool confirmation) {
    Trial t;
    t.value = v, t.peak_bytes = peak, t.steps = steps, t.settled_at = settled, t.measured = true, t.confirmation = confirmation;
    return t;
  };
  r.trials = {trial(1, 9 * GiB, 9, 3, false), trial(7, 15 * GiB, 12, 6, false), trial(7, 15 * GiB + 800 * MiB, 50, 27, true)};
  Trial oom;
  oom.value = 8, oom.outcome = Outcome::Oom, oom.steps = 5;
  r.trials.push_back(oom);
  const auto note = late_rise_note(r);
  EXPECT_NE(note.find("rose after its trial settled"), std::string::npos) << note;
  EXPECT_NE(note.find("settled at step 27"), std::string::npos) << note;
  EXPECT_NE(render_text(r).find("note: the memory of batch 7 rose"), std::string::npos);
  EXPECT_TRUE(to_json(r)["late_rise"].is_string());
  r.trials[2].peak_bytes = 15 * GiB + 100 * MiB;  // within 1 % of the card: the same peak
  EXPECT_EQ(late_rise_note(r), "");
  EXPECT_TRUE(to_json(r)["late_rise"].is_null());
}
