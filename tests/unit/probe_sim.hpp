// Simulated jobs for the probe's search tests (test_probe_search.cpp, test_probe_families.cpp,
// test_probe_h200.cpp): a job as the probe sees it, the loop that drives a search against it, and
// the counts and sequences the tests print for docs/probe.md.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/probe/guide.hpp"
#include "core/units.hpp"

namespace vramdoc::probe::sim {

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
inline Search drive(const std::function<Trial(std::uint64_t)>& run, SearchLimits limits) {
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

inline Search search(const SimJob& job, SearchLimits limits) {
  return drive([&job](std::uint64_t v) { return job.run(v); }, limits);
}

// The plain search's limits: values 1 .. max, nothing to steer by.
inline SearchLimits plain_limits(std::uint64_t max = 4096) {
  SearchLimits l;
  l.start = 1;
  l.max = max;
  l.max_trials = 0, l.confirm_steps = 0;  // the search to the exact limit (the cap: ProbeTrialCap below)
  return l;
}

// A trial that ran out of memory with PyTorch's message ("Tried to allocate R. GPU 0 has a total
// capacity of 139.80 GiB of which F is free. ... this process has U memory in use."), sizes as printed.
inline Trial pytorch_oom(std::uint64_t value, const std::string& requested, const std::string& free, const std::string& in_use,
                  const std::string& more = "") {
  Trial t;
  t.value = value, t.outcome = Outcome::Oom;
  t.detail = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + requested +
             ". GPU 0 has a total capacity of 139.80 GiB of which " + free + " is free. Including non-PyTorch memory, this process has " +
             in_use + " memory in use." + more;
  return t;
}

inline SearchLimits guided_limits(const SimJob& job, std::uint64_t max = 4096) {
  SearchLimits l = plain_limits(max);
  l.capacity_bytes = static_cast<std::uint64_t>(job.capacity);
  return l;
}

// The values tried, "x" after one that ran out of memory.
inline std::string sequence(const Search& s) {
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

// The exact limit within probe's defaults: bracketed, the answer the job's limit, confirmed, in 8 trials.
inline bool exact_in_eight(const Search& s, std::uint64_t limit) {
  return s.reason() == StopReason::Bracketed && s.largest_ok() == limit && s.confirmed() == limit && s.trials().size() <= 8;
}

}  // namespace vramdoc::probe::sim
