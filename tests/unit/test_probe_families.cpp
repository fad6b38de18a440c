// The probe's search over families of simulated jobs (issue 15, point 7; issue 30): 300 jobs of
// each shape, the exact limit always, and the trial counts (guided against plain doubling +
// bisection; with the confirmation for the changing and the H200-shaped families) printed for
// docs/probe.md's tables.
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

namespace {

// Jobs of one family with their parameters drawn at random: fixed part, per-item cost and
// capacity span the cards and models people probe; reach, sampling and noise the measurement's errors.
std::vector<SimJob> family(const std::string& kind, int count) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    SimJob j;
    j.seed = static_cast<unsigned>(i + 1);
    j.capacity = (u(rng) < 0.5 ? 80.0 : 140.0) * GiB;
    j.fixed = (0.5 + 30 * u(rng)) * GiB;
    const double limit = std::exp(std::log(4.0) + u(rng) * std::log(3000.0 / 4.0));  // 4 .. 3000, log-uniform
    // Where the trend of the peaks meets the limit: 2 % short of the card (context, other processes)
    // to 4 % beyond (PyTorch frees its cache before it fails; H200: 408 ran, the trend said 392).
    j.reach = j.capacity * (0.98 + 0.06 * u(rng));
    j.per_item = (j.reach - j.fixed) / limit;
    if (kind == "quadratic") j.quadratic = j.per_item / limit * (0.5 + 2 * u(rng)), j.per_item *= 0.3;
    if (kind == "noisy") j.noise = 0.01 * j.capacity, j.sampled_share = 0.95 + 0.05 * u(rng);
    if (kind == "far reach") j.reach = j.capacity * (0.92 + 0.16 * u(rng));  // --gpu-memory off by -8 .. +8 %
    if (kind == "sampled") j.sampled_share = 0.9 + 0.1 * u(rng);
    if (kind == "message") j.message = true, j.sampled_share = 0.97 + 0.03 * u(rng);
    jobs.push_back(j);
  }
  return jobs;
}

// Jobs whose memory per item changes with the value, the shape the H200 showed on 2026-12-02
// (probe_pytorch alone: 0.23 GiB an item from batch 2 to 17, 0.36 above): "bend up" (each item
// costs 1.3-2.5x more above 30-90 % of the limit), "power" (a smooth v^1.5-3 term, 30-80 % of the
// limit's memory), "step" (5-20 % of the memory more from 30-90 % of the limit on), "bend down"
// (each item costs 0.4-0.8x above 30-90 % of the limit). Cards of 16-140 GiB, fixed parts of
// 5-60 % of the card, limits log-uniform in 4-3000, the reach 2 % under to 4 % over the card.
// Job i of a family: its card (one of `cards`, GiB), a fixed part of 5-60 % of it, a limit
// log-uniform in [min_limit, 3000] and a reach 2 % under to 4 % over the card, drawn in that order
// from `u` (the families' shapes are drawn after it); returns the limit.
template <std::size_t N>
double family_job(SimJob& j, int i, std::mt19937& rng, std::uniform_real_distribution<double>& u,
                  const double (&cards)[N], double min_limit) {
  j.seed = static_cast<unsigned>(i + 1);
  j.capacity = cards[static_cast<int>(u(rng) * N) % N] * GiB;
  j.fixed = (0.05 + 0.55 * u(rng)) * j.capacity;
  const double limit = std::exp(std::log(min_limit) + u(rng) * std::log(3000.0 / min_limit));
  j.reach = j.capacity * (0.98 + 0.06 * u(rng));
  return limit;
}

std::vector<SimJob> changing_family(const std::string& kind, int count) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const double cards[] = {16, 24, 40, 80, 140};
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    SimJob j;
    const double limit = family_job(j, i, rng, u, cards, 4.0);
    const double room = j.reach - j.fixed, at = (0.3 + 0.6 * u(rng)) * limit;
    if (kind == "bend up" || kind == "bend down") {
      const double ratio = kind == "bend up" ? 1.3 + 1.2 * u(rng) : 0.4 + 0.4 * u(rng);
      j.per_item = room / (limit + (ratio - 1) * (limit - at));
      j.bend_at = at, j.bend_per_item = (ratio - 1) * j.per_item;
    } else if (kind == "power") {
      const double share = 0.3 + 0.5 * u(rng);
      j.power = 1.5 + 1.5 * u(rng);
      j.power_bytes = share * room / std::pow(limit, j.power);
      j.per_item = (1 - share) * room / limit;
    } else {  // step
      j.step_bytes = (0.05 + 0.15 * u(rng)) * room, j.step_at = std::max(2.0, std::round(at));
      j.per_item = (room - j.step_bytes) / limit;
    }
    jobs.push_back(j);
  }
  return jobs;
}

// The shapes of round 3's H200 jobs as families (300 jobs each, cards of 6-140 GiB, fixed parts
// 5-60 % of the card, limits log-uniform in 8-3000, the reach 2 % under to 4 % over the card):
// "flat start": the recorded peak never below its value at 5-30 % of the limit (ViT-B/16: flat to
// 4 of 56); "hidden slope": up to 2-10 % of the limit each item costs 0.3-0.6x what it costs above,
// and near the card the peaks saturate (0.99 of it; the job needing 1/1.35-1/1.05 of what it
// caches: the ResNet; 90-98 % before 2026-12-02, when the H200 measured a cache of 1.29-1.31x the
// live tensors on the CNN, docs/probe.md "Round 5 on the H200").
std::vector<SimJob> h200_family(const std::string& kind, int count) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const double cards[] = {6, 10, 16, 24, 40, 80, 140};
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    SimJob j;
    const double limit = family_job(j, i, rng, u, cards, 8.0);
    if (kind == "flat start") {
      j.per_item = (j.reach - j.fixed) / limit;
      j.floor_bytes = j.fixed + j.per_item * std::max(2.0, (0.05 + 0.25 * u(rng)) * limit);
    } else {  // hidden slope
      const double knee = std::max(2.0, (0.02 + 0.08 * u(rng)) * limit), ratio = 0.3 + 0.3 * u(rng);
      j.need_share = 1 / (1.05 + 0.3 * u(rng)), j.saturates_at = 0.99 * j.capacity;
      j.reach = std::min(j.reach, 0.99 * j.capacity);  // saturating: the job reaches no more than its peaks do
      j.per_item = (j.reach - j.fixed) / j.need_share / (limit - (1 - ratio) * knee);
      j.bend_at = knee, j.bend_per_item = (1 - ratio) * j.per_item, j.per_item *= ratio;
    }
    jobs.push_back(j);
  }
  return jobs;
}

}  // namespace

// Every family: the exact limit, found by a trial that ran next to one that failed. Printed: the
// trial counts by the limit's size (the last few trials narrow down the job's reach, 1-2 % of the
// card: more values for a larger limit), against the plain search.
TEST(ProbeGuidedSearch, ExactLimitInFewTrialsOverManyJobs) {
  for (const std::string kind : {"linear", "quadratic", "sampled", "message", "noisy", "far reach"}) {
    Counts guided, plain, small, large;
    for (const auto& job : family(kind, 300)) {
      auto s = search(job, guided_limits(job));
      ASSERT_EQ(s.reason(), StopReason::Bracketed) << kind << " seed " << job.seed;
      EXPECT_EQ(*s.largest_ok(), job.limit()) << kind << " seed " << job.seed;
      EXPECT_EQ(*s.smallest_oom(), job.limit() + 1) << kind << " seed " << job.seed;
      guided.trials.push_back(s.trials().size());
      (job.limit() <= 500 ? small : large).trials.push_back(s.trials().size());
      plain.trials.push_back(search(job, plain_limits()).trials().size());
    }
    std::printf("[probe search] %-9s guided: mean %.1f, median %zu, 95%% %zu, max %zu (limit <= 500: mean %.1f, 95%% %zu; > 500: mean %.1f, "
                "95%% %zu) | plain: mean %.1f, median %zu, max %zu\n",
                kind.c_str(), guided.mean(), guided.quantile(0.5), guided.quantile(0.95), guided.quantile(1.0), small.mean(), small.quantile(0.95),
                large.mean(), large.quantile(0.95), plain.mean(), plain.quantile(0.5), plain.quantile(1.0));
    EXPECT_LT(guided.mean(), 0.65 * plain.mean()) << kind;
    if (kind != "noisy" && kind != "far reach") {
      // Not met for "bend down" (median 9): the model underestimates there, and what costs the
    // trials is the gallop up from below its limit, which this rule does not change (open).
    EXPECT_LE(small.quantile(0.5), kind == "bend down" ? 9U : 8U) << kind;
    }
  }
}

// The recommendation keeps the margin (the job's true peak at it within 90 % of the card) and,
// interpolated between values that ran, lies next to the ideal value.
TEST(ProbeGuidedSearch, RecommendsAValueNearTheMargin) {
  for (const auto& job : family("linear", 50)) {
    auto s = search(job, guided_limits(job));
    auto r = conclude(s, "batch", static_cast<std::uint64_t>(job.capacity), 0.1, false);
    ASSERT_TRUE(r.recommendation.value);
    EXPECT_LE(job.peak(double(*r.recommendation.value)), 0.9 * job.capacity) << job.seed;
    EXPECT_LE(*r.recommendation.value, *s.largest_ok()) << job.seed;
    const double ideal = (0.9 * job.capacity - job.fixed) / job.per_item;
    EXPECT_GE(double(*r.recommendation.value), std::min(ideal, double(*s.largest_ok())) - 1) << job.seed;
  }
}

// The families whose memory per item changes with the value (changing_family): the exact limit
// always (no cap), and within probe's 8 trials, its confirmation included, for the median job
// with a limit up to 500 (as ExactLimitInFewTrialsOverManyJobs; larger limits need more: the
// limit's +-3 % in bytes is more values). Before 2026-12-02: medians 9, 9, 8, 9; since round 4 (a
// trial in a narrow bracket runs the confirmation's length) the trials are counted as probe counts
// them, the confirmation only where the answer's own trial did not run its length: 8, 8, 7, 8.
TEST(ProbeGuidedSearch, JobsWhoseMemoryPerItemChangesExactLimitWithinEightTrials) {
  for (const std::string kind : {"bend up", "power", "step", "bend down"}) {
    Counts uncapped, small;
    int exact_in_eight = 0;
    const auto jobs = changing_family(kind, 300);
    for (const auto& job : jobs) {
      auto limits = guided_limits(job);
      limits.confirm_steps = 50;  // the confirmation counted as probe counts it (none when the answer's trial ran its length)
      const auto s = search(job, limits);
      ASSERT_EQ(s.reason(), StopReason::Bracketed) << kind << " seed " << job.seed << sequence(s);
      EXPECT_EQ(*s.largest_ok(), job.limit()) << kind << " seed " << job.seed << sequence(s);
      uncapped.trials.push_back(s.trials().size());
      if (job.limit() <= 500) small.trials.push_back(s.trials().size());
      limits.max_trials = 8;
      const auto capped = search(job, limits);
      if (capped.reason() == StopReason::Bracketed && capped.largest_ok() == job.limit() && capped.trials().size() <= 8) ++exact_in_eight;
    }
    std::printf("[probe search] %-9s trials to the exact limit with the confirmation: mean %.1f, median %zu, 95%% %zu, max %zu; "
                "exact within probe's 8: %d of %zu (limits <= 500: median %zu, mean %.1f)\n",
                kind.c_str(), uncapped.mean(), uncapped.quantile(0.5), uncapped.quantile(0.95), uncapped.quantile(1.0), exact_in_eight,
                jobs.size(), small.quantile(0.5), small.mean());
    EXPECT_LE(small.quantile(0.5), 8U) << kind;  // "bend down" needed 9 before round 4
  }
}

// The families of round 3's shapes: the exact limit always, and the trials to it with the
// confirmation (probe's count), printed for docs/probe.md with how many are exact within probe's 8.
// "+peak=": the same jobs with the step hook's allocator peak (need(v)): probe II's rule must put
// more of the hidden-slope jobs (saturating) exact within 8, and no fewer of the flat start's.
TEST(ProbeH200Round3, FamiliesOfTheH200ShapesExactLimit) {
  std::map<std::string, int> exact_within_eight;
  std::map<std::string, std::size_t> most;
  for (const std::string kind : {"flat start", "hidden slope", "flat start +peak=", "hidden slope +peak="}) {
    Counts all, small;
    int in_eight = 0;
    std::string worst;
    auto jobs = h200_family(kind.substr(0, kind.find(" +")), 300);
    for (auto& j : jobs) j.reports_allocated = kind.find("+peak=") != std::string::npos;
    for (const auto& job : jobs) {
      auto limits = guided_limits(job);
      limits.confirm_steps = 50;
      const auto s = search(job, limits);
      ASSERT_EQ(s.reason(), StopReason::Bracketed) << kind << " seed " << job.seed << sequence(s);
      EXPECT_EQ(*s.largest_ok(), job.limit()) << kind << " seed " << job.seed << sequence(s);
      if (s.trials().size() > all.quantile_or(0)) worst = sequence(s) + " (limit " + std::to_string(job.limit()) + ")";
      all.trials.push_back(s.trials().size());
      if (job.limit() <= 500) small.trials.push_back(s.trials().size());
      limits.max_trials = 8;
      if (exact_in_eight(search(job, limits), job.limit())) ++in_eight;
    }
    std::printf("[probe search] %-12s trials to the exact limit with the confirmation: mean %.1f, median %zu, 95%% %zu, max %zu; "
                "exact within probe's 8: %d of %zu (limits <= 500: median %zu, mean %.1f)\n",
                kind.c_str(), all.mean(), all.quantile(0.5), all.quantile(0.95), all.quantile(1.0), in_eight, jobs.size(),
                small.quantile(0.5), small.mean());
    std::printf("[probe search] %-12s the most trials: %s\n", kind.c_str(), worst.c_str());
    exact_within_eight[kind] = in_eight, most[kind] = all.quantile(1.0);
  }
  EXPECT_GT(exact_within_eight["hidden slope +peak="], exact_within_eight["hidden slope"]);
  EXPECT_GE(exact_within_eight["flat start +peak="], exact_within_eight["flat start"]);
  for (const std::string kind : {"flat start", "hidden slope"}) EXPECT_LE(most[kind + " +peak="], most[kind]) << kind;
}
