// The probe's search against simulated jobs of many shapes (issue 15, point 7): it must find the
// exact largest value that runs (its neighbour fails), recommend only values that ran, and take
// few trials. Trial counts of the guided and the plain (doubling + bisection) search are printed
// for docs/probe.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/probe/guide.hpp"
#include "core/probe/report.hpp"
#include "core/units.hpp"

using namespace vramdoc;
using namespace vramdoc::probe;

namespace {

// A job as the probe sees it: the true peak at a value, what the sampler records of it, and
// whether the allocator can reach it on the card.
struct SimJob {
  double fixed = 6 * GiB, per_item = 281 * MiB, quadratic = 0;
  double capacity = 140 * GiB;
  double reach = 140 * GiB;       // what the job can really get: OOM above
  double sampled_share = 1;       // the sampler sees this share of the true peak (transients missed)
  double noise = 0;               // standard deviation of the recorded peak, bytes
  bool message = false;           // the OOM trial prints PyTorch's message (in use + free = reach)
  std::uint64_t leaks_from = 0;   // trials at this value and above grow step after step (0: never)
  // Near its cap the allocator frees its cache and retries: the job needs only this share of what
  // it would cache above the fixed part, and the recorded peak stops at `saturates_at` (0: never).
  double need_share = 1, saturates_at = 0;
  double message_reach = 0;       // the OOM message's in use + free, when another process held the card then (0: reach)
  // Above `bend_at` each item adds `bend_per_item` more (a cache or buffer that grows faster with
  // the value; negative: each item costs less), and from `step_at` on the peak is `step_bytes`
  // higher (another kernel's workspace, a second segment size). 0: none.
  double bend_at = 0, bend_per_item = 0, step_at = 0, step_bytes = 0;
  // A smooth convex term: `power_bytes` x v^power.
  double power = 0, power_bytes = 0;
  // The recorded peak never falls below this (the allocator's first blocks, workspaces, cached
  // segments: a flat start where small values hide the per-item cost; ViT-B/16 on the H200). 0: none.
  double floor_bytes = 0;
  // The step hook's peak= (probe II): the allocator's peak of live tensors is what the job needs,
  // need(v), growing where the recorded peak is pinned or floored. Off: an older hook.
  bool reports_allocated = false;
  unsigned seed = 1;

  double extra(double v) const {
    return (bend_at > 0 && v > bend_at ? bend_per_item * (v - bend_at) : 0) + (step_at > 0 && v >= step_at ? step_bytes : 0) +
           (power > 0 ? power_bytes * std::pow(v, power) : 0);
  }
  double peak(double v) const { return fixed + per_item * v + quadratic * v * v + extra(v); }
  double need(double v) const { return fixed + need_share * (per_item * v + quadratic * v * v + extra(v)); }
  std::uint64_t limit() const {  // the exact answer: the largest value whose need is within reach
    std::uint64_t lo = 0, hi = 1ULL << 22;
    while (hi - lo > 1) (need(double(lo + (hi - lo) / 2)) <= reach ? lo : hi) = lo + (hi - lo) / 2;
    return lo;
  }
  Trial run(std::uint64_t v) const {
    Trial t;
    t.value = v;
    if (need(double(v)) > reach) {
      t.outcome = Outcome::Oom;
      char buf[400];
      std::snprintf(buf, sizeof buf, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of %.2f GiB "
                    "of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use.",
                    capacity / GiB, 1.5, (message_reach > 0 ? message_reach : reach) / GiB - 1.5);
      t.detail = message ? buf : "CUDA out of memory";
      return t;
    }
    std::mt19937 rng(seed * 7919u + static_cast<unsigned>(v));
    std::normal_distribution<double> jitter(0, noise);
    const double grown = std::max(peak(double(v)), floor_bytes);
    const double recorded = saturates_at > 0 ? std::min(grown, saturates_at) : grown;
    t.peak_bytes = static_cast<std::uint64_t>(std::max(0.0, recorded * sampled_share + jitter(rng)));
    t.measured = true;
    if (reports_allocated) t.allocated_peak_bytes = static_cast<std::uint64_t>(need(double(v)));
    t.memory_grew = leaks_from && v >= leaks_from;
    return t;
  }
};

// The search against a job given as its trial at each value: a confirmation runs confirm_steps.
Search drive(const std::function<Trial(std::uint64_t)>& run, SearchLimits limits) {
  Search s(limits);
  for (int guard = 0; guard < 200; ++guard) {
    auto v = s.next();
    if (!v) break;
    const bool long_run = s.confirming() || s.runs_long();
    Trial t = run(*v);
    t.confirmation = s.confirming();
    if (long_run && t.outcome == Outcome::Ok) t.steps = limits.confirm_steps;
    s.record(t);
  }
  return s;
}

Search search(const SimJob& job, SearchLimits limits) {
  return drive([&job](std::uint64_t v) { return job.run(v); }, limits);
}

// The plain search's limits: values 1 .. max, nothing to steer by.
SearchLimits plain_limits(std::uint64_t max = 4096) {
  SearchLimits l;
  l.start = 1;
  l.max = max;
  l.max_trials = 0, l.confirm_steps = 0;  // the search to the exact limit (the cap: ProbeTrialCap below)
  return l;
}

// A trial that ran out of memory with PyTorch's message ("Tried to allocate R. GPU 0 has a total
// capacity of 139.80 GiB of which F is free. ... this process has U memory in use."), sizes as printed.
Trial pytorch_oom(std::uint64_t value, const std::string& requested, const std::string& free, const std::string& in_use,
                  const std::string& more = "") {
  Trial t;
  t.value = value, t.outcome = Outcome::Oom;
  t.detail = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + requested +
             ". GPU 0 has a total capacity of 139.80 GiB of which " + free + " is free. Including non-PyTorch memory, this process has " +
             in_use + " memory in use." + more;
  return t;
}

SearchLimits guided_limits(const SimJob& job, std::uint64_t max = 4096) {
  SearchLimits l = plain_limits(max);
  l.capacity_bytes = static_cast<std::uint64_t>(job.capacity);
  return l;
}

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
std::vector<SimJob> changing_family(const std::string& kind, int count) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const double cards[] = {16, 24, 40, 80, 140};
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    SimJob j;
    j.seed = static_cast<unsigned>(i + 1);
    j.capacity = cards[static_cast<int>(u(rng) * 5) % 5] * GiB;
    j.fixed = (0.05 + 0.55 * u(rng)) * j.capacity;
    const double limit = std::exp(std::log(4.0) + u(rng) * std::log(3000.0 / 4.0));
    j.reach = j.capacity * (0.98 + 0.06 * u(rng));
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

// The values tried, "x" after one that ran out of memory.
std::string sequence(const Search& s) {
  std::string seq;
  for (const auto& t : s.trials()) seq += " " + std::to_string(t.value) + (t.outcome == Outcome::Oom ? "x" : "");
  return seq;
}

struct Counts {
  std::vector<std::size_t> trials;
  double mean() const { double s = 0; for (auto t : trials) s += double(t); return s / double(trials.size()); }
  std::size_t quantile_or(std::size_t none) const { return trials.empty() ? none : *std::max_element(trials.begin(), trials.end()); }
  std::size_t quantile(double q) const {
    auto v = trials;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * double(v.size() - 1))];
  }
};

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

// The H200 measurement (tests/data/probe/h200_probe_curve.jsonl, scripts/gpu/probe_curve.py):
// probe_train.py's model, peak reserved bytes at each batch up to the exact limit, 408. A trial's
// peak is that plus the CUDA context, interpolated between measured batches; OOM above 408.
TEST(ProbeGuidedSearch, RealH200CurveFindsTheMeasuredLimit) {
  std::ifstream in(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/probe/h200_probe_curve.jsonl");
  std::map<double, double> peaks;
  std::uint64_t largest_ok = 0;
  double total = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("largest_ok")) largest_ok = j["largest_ok"], total = j["total"];
    else if (!j["oom"].get<bool>()) peaks[j["batch"].get<double>()] = j["max_reserved"].get<double>() + 512 * MiB;
  }
  ASSERT_EQ(largest_ok, 408U);
  auto run = [&](std::uint64_t v) {
    Trial t;
    t.value = v;
    if (v > largest_ok) {
      t.outcome = Outcome::Oom;
      return t;
    }
    auto hi = peaks.lower_bound(double(v));
    auto lo = hi == peaks.begin() ? hi : std::prev(hi);
    const double w = hi == lo || hi->first == lo->first ? 0 : (double(v) - lo->first) / (hi->first - lo->first);
    t.peak_bytes = static_cast<std::uint64_t>(lo->second + w * (hi->second - lo->second));
    t.measured = true;
    return t;
  };
  auto probe = [&](SearchLimits limits) {
    Search s(limits);
    while (auto v = s.next()) s.record(run(*v));
    return s;
  };
  SearchLimits guided = plain_limits();
  guided.capacity_bytes = static_cast<std::uint64_t>(total);
  const auto s = probe(guided), plain = probe(plain_limits());
  std::printf("[probe search] H200 curve: guided %zu trials (%s), plain %zu\n", s.trials().size(), sequence(s).c_str(), plain.trials().size());
  EXPECT_EQ(*s.largest_ok(), 408U);
  EXPECT_EQ(*s.smallest_oom(), 409U);
  EXPECT_LE(s.trials().size(), 11U);
  EXPECT_EQ(*plain.largest_ok(), 408U);
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

namespace {

// A job replayed from a probe run on the H200 (issue 30, round 3, 2026-12-02,
// scripts/gpu/probe_round3.sh): the driver's peaks its trials measured, interpolated between the
// values measured, the first one's below them, beyond the last extrapolated with the last two's
// slope or, from `saturated_from` on, held at the peak there (the allocator freeing its cache near
// its cap); out of memory above `limit`.
struct MeasuredJob {
  std::map<double, double> peaks;  // value -> peak, bytes
  double card = 0;
  std::uint64_t limit = 0;
  double saturated_from = 0;
  // The allocator's own peak (the step hook's peak=), which the H200 run did not record: built from
  // the mechanism that the allocator caches `rho` x what is live while the cache fits, so
  // allocated(v) = (the unsaturated driver curve - the context) / rho, growing on where the driver's
  // peak is pinned at the card. 0: no peak= in the lines (an older hook).
  double rho = 0, context = 0;
  double peak(double v) const { return curve(saturated_from > 0 && v >= saturated_from ? saturated_from : v); }
  double curve(double v) const {
    auto hi = peaks.lower_bound(v);
    if (hi == peaks.begin()) return hi->second;
    if (hi == peaks.end()) {
      const auto last = std::prev(peaks.end()), before = std::prev(last);
      return last->second + (v - last->first) * (last->second - before->second) / (last->first - before->first);
    }
    const auto lo = std::prev(hi);
    return lo->second + (v - lo->first) / (hi->first - lo->first) * (hi->second - lo->second);
  }
  Trial run(std::uint64_t v) const {
    Trial t;
    t.value = v;
    if (v > limit) {
      t.outcome = Outcome::Oom;  // its message carries the device's free memory, not the cap's: no reach
      t.detail = "torch.OutOfMemoryError: CUDA out of memory";
      return t;
    }
    t.peak_bytes = static_cast<std::uint64_t>(peak(double(v)));
    t.measured = true;
    if (rho > 0) {
      t.allocated_peak_bytes = static_cast<std::uint64_t>((curve(double(v)) - context) / rho);
      t.outside_allocator_bytes = static_cast<std::uint64_t>(context);
    }
    return t;
  }
};

// probe's defaults: at most 8 trials, the confirmation included, and its 50 steps.
SearchLimits probe_defaults(double card, std::uint64_t max = 4096) {
  SearchLimits l;
  l.max = max;
  l.capacity_bytes = static_cast<std::uint64_t>(card);
  return l;
}

// The exact limit within probe's defaults: bracketed, the answer the job's limit, confirmed, in 8 trials.
bool exact_in_eight(const Search& s, std::uint64_t limit) {
  return s.reason() == StopReason::Bracketed && s.largest_ok() == limit && s.confirmed() == limit && s.trials().size() <= 8;
}

}  // namespace

// Issue 30, H200 2026-12-02 (round 3): ViT-B/16 on 6 GiB. Peaks 2.69 2.63 2.63 GiB at 1 2 4 (the
// fixed part hides the per-item cost), then ~0.066 GB an item; the search climbed 1 2 4 15 29 43 53
// and spent its trials: "fits_at_least 53, 54-4096 untried" (accelerate's 57 ran 50 steps under a
// cap 140 MB larger). The limit here: where the last slope reaches the card.
TEST(ProbeH200Round3, VitsFlatStartIsFoundExactlyWithinEightTrials) {
  MeasuredJob job;
  job.card = 6 * GiB;
  job.peaks = {{1, 2883584000.0}, {2, 2824863744.0}, {4, 2820669440.0}, {15, 3393191936.0},
               {29, 4410310656.0}, {43, 5565841408.0}, {53, 6226444288.0}};
  while (job.peak(double(job.limit + 1)) <= job.card) ++job.limit;
  ASSERT_EQ(job.limit, 56U);
  const auto s = drive([&job](std::uint64_t v) { return job.run(v); }, probe_defaults(job.card));
  std::printf("[probe search] H200 ViT-B/16 on 6 GiB (limit %llu): %zu trials (%s)\n", static_cast<unsigned long long>(job.limit),
              s.trials().size(), sequence(s).c_str());
  EXPECT_TRUE(exact_in_eight(s, job.limit)) << sequence(s);
}

// Issue 30, H200 2026-12-02 (round 3): a torchvision ResNet on 6 GiB. 1.32 and 1.39 GiB at 1 and 4
// (0.021 GiB an item; from 4 to 105: 0.045), so the first jump went to 196 (OOM); 105 ran at
// 5.95 GiB (saturated: the allocator freeing its cache) and the search went 152x 129x 117x and
// stopped at "fits_at_least 105, 106-116 untried" (106 ran). The limit: accelerate's 114, which
// ran under a cap 145.75 MB larger than probe's, less what that buys at 4-105's slope (3 items).
// Round 5 (probe II): with the allocator's peaks (built, see MeasuredJob::rho; the context 619 MiB
// as measured in that run) the saturated 105 no longer leaves 105-196 blind: for a cache of
// 1.05-1.25x what is live the 8 trials end with at most one value untried next to the answer
// (round 4: 106-116), exact with its confirmation for 3 of the 5 ratios (1.05 1.10 1.20; 1.15 and
// 1.25 spend the 8th trial before the answer's confirmation: open); without peak= the sequence is round 4's.
TEST(ProbeH200Round3, CnnWhoseSmallBatchesHideTheSlopeIsFoundExactlyWithinEightTrials) {
  MeasuredJob job;
  job.card = 6 * GiB;
  job.peaks = {{1, 1421869056.0}, {4, 1488977920.0}, {105, 6392119296.0}};
  job.saturated_from = 105;
  const double slope = (6392119296.0 - 1488977920.0) / 101;
  job.limit = 114 - static_cast<std::uint64_t>(std::round(145752064.0 / slope));
  ASSERT_EQ(job.limit, 111U);
  const auto old = drive([&job](std::uint64_t v) { return job.run(v); }, probe_defaults(job.card));
  EXPECT_EQ(sequence(old), " 1 4 196x 105 152x 129x 117x 105") << "without peak= the search is round 4's";
  job.context = 619 * MiB;
  int exact = 0;
  for (const double rho : {1.05, 1.1, 1.15, 1.2, 1.25}) {
    job.rho = rho;
    const auto s = drive([&job](std::uint64_t v) { return job.run(v); }, probe_defaults(job.card));
    std::printf("[probe search] H200 ResNet on 6 GiB (limit %llu), allocated peaks cached x%.2f: %zu trials (%s)\n",
                static_cast<unsigned long long>(job.limit), rho, s.trials().size(), sequence(s).c_str());
    ASSERT_TRUE(s.largest_ok()) << rho << sequence(s);
    EXPECT_LE(s.trials().size(), 8U) << rho << sequence(s);
    EXPECT_GE(*s.largest_ok() + 1, job.limit) << rho << sequence(s);  // at most one value untried below the limit
    EXPECT_LE(*s.largest_ok(), job.limit) << rho << sequence(s);
    exact += exact_in_eight(s, job.limit) ? 1 : 0;
  }
  EXPECT_GE(exact, 3) << "exact within 8 for 1.05, 1.10 and 1.20";
}

// Issue 30, H200 2026-12-02 (round 3, tests/gpu/probe_pytorch.sh on 14.04 GiB): 1 2 17 26 28 29
// 30x, the peaks of 28 and 29 saturated (13.96, 14.03 GiB) so the search climbed by ones from 26.
TEST(ProbeH200Round3, ProbePytorchsClimbIsFoundExactlyWithinEightTrials) {
  MeasuredJob job;
  job.card = 14.04 * GiB;
  job.peaks = {{1, 6.63 * GiB}, {2, 7.00 * GiB}, {17, 10.43 * GiB}, {26, 13.53 * GiB}, {28, 13.96 * GiB}, {29, 14.03 * GiB}};
  job.limit = 29;
  const auto s = drive([&job](std::uint64_t v) { return job.run(v); }, probe_defaults(job.card, 256));
  std::printf("[probe search] H200 probe_pytorch on 14.04 GiB (limit 29): %zu trials (%s)\n", s.trials().size(), sequence(s).c_str());
  EXPECT_TRUE(exact_in_eight(s, job.limit)) << sequence(s);
}

namespace {

// The shapes of round 3's H200 jobs as families (300 jobs each, cards of 6-140 GiB, fixed parts
// 5-60 % of the card, limits log-uniform in 8-3000, the reach 2 % under to 4 % over the card):
// "flat start": the recorded peak never below its value at 5-30 % of the limit (ViT-B/16: flat to
// 4 of 56); "hidden slope": up to 2-10 % of the limit each item costs 0.3-0.6x what it costs above,
// and near the card the peaks saturate (0.99 of it; the job needing 90-98 % of what it caches:
// the ResNet).
std::vector<SimJob> h200_family(const std::string& kind, int count) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const double cards[] = {6, 10, 16, 24, 40, 80, 140};
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    SimJob j;
    j.seed = static_cast<unsigned>(i + 1);
    j.capacity = cards[static_cast<int>(u(rng) * 7) % 7] * GiB;
    j.fixed = (0.05 + 0.55 * u(rng)) * j.capacity;
    const double limit = std::exp(std::log(8.0) + u(rng) * std::log(3000.0 / 8.0));
    j.reach = j.capacity * (0.98 + 0.06 * u(rng));
    if (kind == "flat start") {
      j.per_item = (j.reach - j.fixed) / limit;
      j.floor_bytes = j.fixed + j.per_item * std::max(2.0, (0.05 + 0.25 * u(rng)) * limit);
    } else {  // hidden slope
      const double knee = std::max(2.0, (0.02 + 0.08 * u(rng)) * limit), ratio = 0.3 + 0.3 * u(rng);
      j.need_share = 0.9 + 0.08 * u(rng), j.saturates_at = 0.99 * j.capacity;
      j.reach = std::min(j.reach, 0.99 * j.capacity);  // saturating: the job reaches no more than its peaks do
      j.per_item = (j.reach - j.fixed) / j.need_share / (limit - (1 - ratio) * knee);
      j.bend_at = knee, j.bend_per_item = (1 - ratio) * j.per_item, j.per_item *= ratio;
    }
    jobs.push_back(j);
  }
  return jobs;
}

}  // namespace

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
