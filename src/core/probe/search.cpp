#include "core/probe/search.hpp"

#include <algorithm>
#include <cmath>

#include "core/probe/guide.hpp"
#include "core/timeline/oom_message.hpp"

namespace vramdoc::probe {

namespace {

// A trial whose peak is below this share of the margin's bytes is far from the limit: the next
// trial aims at the margin again, from the refitted curve, instead of jumping to the limit.
// (0.8 before 2026-12-02: the H200's probe_pytorch job jumped from batch 17, at 75 % of the card,
// straight to the line's limit 33; its curve steepens above 17, and 33 31 28 ran out of memory.
// The simulated families are unchanged by it: their margin trial lands near the margin or beyond.)
constexpr double kFarFromMargin = 0.9;
// How uncertain the limit in bytes is (the prior's scale), as a share of the card: the card's
// capacity is not what a job can reach (context, other processes, the allocator's last-ditch
// freeing, a transient peak the sampler missed); an OOM message's "in use + free" is, but not the
// sampler's miss.
constexpr double kCardLimitShare = 0.015;
constexpr double kKnownLimitShare = 0.01;
// Where the trend of a job's peaks meets the limit, as a share of the card, when no OOM message
// says: the context and other processes take a little, but near the card PyTorch frees its cache
// and retries before it fails, so the peaks bend below the trend (H200, probe_train.py: the trend
// of the peaks crossed the card at batch 392, batch 408 still ran: 4 % beyond).
constexpr double kCardReach = 1.01;
constexpr double kCoreScales = 2;       // the model's limit is trusted within this many scales (split_prior's core)
constexpr double kGeometricSplit = 2;   // a bracket this wide (hi / lo) after the model failed: split it geometrically
// An OOM more than kCoreScales below the model's limit says the curve passed under it (it
// steepens beyond the values that ran): the limit's uncertainty becomes this share of the
// distance the model extrapolated (its limit less the largest value that ran), so the split is
// close to a bisection of the bracket, leaning toward the model (docs/probe.md, "Search").
constexpr double kContradictedShare = 0.5;
// Peaks that do not grow with the value (PeakModel::flat): at least this many times the largest
// value that ran next, not the proportional bound's margin / peak (1.36x a trial for a fixed part of
// 66 % of the card: 1 2 3 4 5 6 8 10 13 17 23 31 42 57 77 105 ... in the "flat start" family),
// within where the bound doubles the card. 8 rather than 2 or 4: the flat family's mean 11.7
// trials (2: 13.5, 4: 12.0; before: 15.0), the others unchanged (noisy's max 17, 18 with 2 or 4).
constexpr std::uint64_t kFlatGallop = 8;
// A bracket this narrow (the smallest OOM less the largest value that ran) is near its end: each
// trial in it may be the answer, so it runs for the confirmation's length and, when it is the
// answer, needs no confirmation trial (issue 30, round 4; 8 rather than 4: 3-7 more of the
// changing families' 300 jobs exact within 8 trials; test_probe_families.cpp).
constexpr std::uint64_t kLongBracket = 8;

// A value that ran (or failed) with its peak at the card (saturated(): the driver's number says nothing there).
bool any_saturated(const std::vector<Trial>& trials, double cap) {
  return std::any_of(trials.begin(), trials.end(), [&](const Trial& t) { return saturated(t, cap); });
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Ok: return "ok";
    case Outcome::Oom: return "oom";
    case Outcome::Failed: return "failed";
  }
  return "?";
}

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::Running: return "running";
    case StopReason::Bracketed: return "bracketed";
    case StopReason::ReachedMax: return "reached_max";
    case StopReason::FailsAtStart: return "fails_at_start";
    case StopReason::Leaks: return "leaks";
    case StopReason::OtherFailure: return "other_failure";
    case StopReason::Unmeasured: return "unmeasured";
    case StopReason::TrialsSpent: return "trials_spent";
  }
  return "?";
}

namespace {

// The search has an answer to confirm: the bracket, --max or the trial cap.
bool answered(StopReason r) { return r == StopReason::Bracketed || r == StopReason::ReachedMax || r == StopReason::TrialsSpent; }

}  // namespace

Search::Search(SearchLimits limits) : limits_(limits) {
  limits_.start = std::max<std::uint64_t>(limits_.start, 1);
  limits_.max = std::max(limits_.max, limits_.start);
}

std::optional<std::uint64_t> Search::guided() const {
  if (!limits_.capacity_bytes || !largest_ok_) return std::nullopt;
  const auto model = peak_model(trials_, limits_.estimate_bytes, static_cast<double>(*limits_.capacity_bytes));
  if (!model) return std::nullopt;
  const std::uint64_t lo = *largest_ok_;
  const double cap = static_cast<double>(*limits_.capacity_bytes);
  // The limit lies in [lo, ceiling): below the first OOM, or below where the model doubles the card.
  const std::uint64_t ceiling = smallest_oom_ ? *smallest_oom_ : value_within(*model, 2 * cap, lo, limits_.max) + 1;
  if (ceiling <= lo + 1) return smallest_oom_ ? std::nullopt : std::optional<std::uint64_t>(std::min(lo + 1, limits_.max));
  // Far from the limit: jump to just under the margin (the recommendation's candidate, and a far
  // point that pins the model's slope).
  const double margin_bytes = (1 - limits_.margin_fraction) * cap;
  double peak_lo = 0;
  for (const auto& t : trials_)
    if (t.value == lo && t.peak_bytes) peak_lo = static_cast<double>(*t.peak_bytes);
  if (!smallest_oom_ && (model->proportional || peak_lo < kFarFromMargin * margin_bytes)) {
    std::uint64_t v = value_within(*model, margin_bytes, lo, ceiling - 1);
    if (model->flat) v = std::max(v, std::min(kFlatGallop * lo, ceiling - 1));
    if (v > lo) return v;
  }
  return near_limit(*model, lo, ceiling);
}

std::uint64_t Search::near_limit(const PeakModel& model, std::uint64_t lo, std::uint64_t ceiling) const {
  // The limit in bytes: the OOM message's in use + free when a trial printed one, else just under
  // the card (context, other processes and the driver's own reserve take a little).
  const double cap = static_cast<double>(*limits_.capacity_bytes);
  const auto reachable = reachable_bytes(trials_, cap);
  const double target = reachable.value_or(kCardReach * cap);
  // Searched from the smallest value, not from lo: a model whose limit lies below a value that ran
  // is wrong there, and each value that runs above it then counts against it (contradictions());
  // clamped to lo, the guess followed every value that ran, one small step at a time (ResNet-50
  // held to 16 GiB, its peaks saturated: 345 350 355 357 361, no OOM in 8 trials).
  const double crossing = predicted_value(model, target, limits_.start, std::max(limits_.max, ceiling));
  const double slope = model.predict(crossing + 1) - model.predict(crossing);
  double scale = slope > 0 ? std::max(0.5, (reachable ? kKnownLimitShare : kCardLimitShare) * cap / slope) : 0.05 * crossing + 0.5;
  // The message's reach bounds the recorded peaks from above (a sampler only misses memory): the
  // limit lies below where the model crosses it, so the guess sits one core's half-width lower.
  const double center = reachable ? crossing - kCoreScales * scale : crossing;
  const double a = static_cast<double>(lo), b = static_cast<double>(ceiling);
  // Where the driver's peak says nothing (a value that ran saturated it, or the peaks did not grow),
  // the allocator's own peaks say where the limit lies (allocated_limit): between where its cache
  // would fill the card and where its live tensors would, less what the trials ruled out (the
  // bracket). Its middle is the guess, a quarter of it the uncertainty (the prior's core then spans
  // it): a bisection of the interval, with the tail for a limit outside it. An interval the trials
  // refuted (a value ran above its top, or one ran out below its bottom) is not used: clipped to
  // the bracket it had no width and the split crept by ones (the flat-start family: 134 trials).
  // Without `peak=` nothing changes.
  if (smallest_oom_ && (model.flat || any_saturated(trials_, cap)))
    if (const auto alloc = allocated_limit(trials_, cap); alloc && alloc->high > a && alloc->low < b) {
      // What the allocator can have (the card less the context) is known only to kCardLimitShare
      // of the card, as the driver's limit is: the uncertainty is never below that, in values at
      // A's slope. Without it, an interval clipped by the bracket to almost no width crept down
      // from an OOM above it by ones (the hidden-slope family with caches of 1.05-1.35x, issue 30:
      // 2601x 2596x 2594x 2593x 2592x ..., 23 trials).
      const double from = std::clamp(alloc->low, a, b), to = std::clamp(alloc->high, from, b);
      const double reach_scale = alloc->per_value_bytes > 0 ? kCardLimitShare * cap / alloc->per_value_bytes : 0;
      return split_prior((from + to) / 2, std::max({0.5, (to - from) / 4, reach_scale}), lo, ceiling);
    }
  // A trial ran out well below the model's limit: the curve passed under the OOM, so it is wrong
  // beyond the values that ran (a curve it has not seen). Trust it less, in proportion to how far
  // it reached: the split below is then close to a bisection of the bracket, leaning toward the
  // model, and a value that runs refits the curve. Before 2026-12-02 each such OOM only doubled
  // the 1.5 % of the card, so the split came down from the guess a step at a time (probe_pytorch
  // on the H200: 33x 31x 28x under a limit of 24-27), and a bracket 2x wide or more was split
  // geometrically, which climbed from its low end when the model was off by less than 2.5x
  // (tests/unit/test_probe_families.cpp's bend-up, power and step families: 0.3-1.5 trials more).
  if (smallest_oom_ && b < center - kCoreScales * scale) scale = std::max(scale, kContradictedShare * (center - a));
  if (smallest_oom_ && center < a - kCoreScales * scale) {
    // The model's limit lies below a value that ran: it is wrong here, and the prior's tail would
    // creep up from the bracket's low end one value a trial (H200, 2026-12-02: 3 4 5 6 under 17x).
    // Bisect the bracket: geometrically when wide, else its middle.
    return static_cast<std::uint64_t>(std::clamp(std::round(b >= kGeometricSplit * a ? std::sqrt(a * b) : (a + b) / 2), a + 1, b - 1));
  }
  // Each outcome near the limit that the guess contradicts doubles its uncertainty: after one the
  // split leans less on the guess, after a few it is a bisection of the bracket.
  const double margin_value = predicted_value(model, (1 - limits_.margin_fraction) * cap, 0, std::max(limits_.max, ceiling));
  return split_prior(center, scale * std::pow(2.0, contradictions(center, margin_value)), lo, ceiling);
}

int Search::contradictions(double center, double from) const {
  int n = 0;
  for (const auto& t : trials_) {
    if (t.card_full) continue;
    const double v = static_cast<double>(t.value);
    if (v > from && ((t.outcome == Outcome::Oom && v < center) || (t.outcome == Outcome::Ok && v > center))) ++n;
  }
  return n;
}

bool Search::confirming() const {
  return answered(reason_) && limits_.confirm_steps > 0 && largest_ok_ && !confirmed_;
}

bool Search::runs_long() const {
  if (confirming() || reason_ != StopReason::Running || retry_ || limits_.confirm_steps <= 0 || !largest_ok_) return false;
  // The last two trials the cap allows: one that runs may be the answer the cap stops at.
  if (limits_.max_trials > 0 && static_cast<int>(trials_.size()) + 2 >= limits_.max_trials) return true;
  if (smallest_oom_ && *smallest_oom_ - *largest_ok_ <= kLongBracket) return true;
  // No OOM yet, but the largest value that ran peaked above the margin and the next trial steps at
  // most kLongBracket past it: the model puts the limit there, so the trial may be the answer
  // (issue 30, round 7: the H200's ViT-B/16 on 6 GiB went 1 2 9 39 55 57 59x; 57, 1.3 % under the
  // card after 55, ran 10 steps, so the 8th trial confirmed it and 58, which ran 50 steps, was left
  // untried: "at least 57").
  if (!smallest_oom_ && limits_.capacity_bytes && near_margin(*largest_ok_))
    if (const auto v = next(); v && *v > *largest_ok_ && *v - *largest_ok_ <= kLongBracket) return true;
  // The allocator's peaks place the limit in an interval (allocated_limit) that one split leaves
  // within kLongBracket: the trial may be the answer as in a narrow bracket (probe II).
  return smallest_oom_ && limits_.capacity_bytes && allocated_guides();
}

bool Search::near_margin(std::uint64_t value) const {
  const double margin_bytes = (1 - limits_.margin_fraction) * static_cast<double>(*limits_.capacity_bytes);
  for (const auto& t : trials_)
    if (t.value == value && t.outcome == Outcome::Ok && t.peak_bytes && static_cast<double>(*t.peak_bytes) >= margin_bytes) return true;
  return false;
}

bool Search::allocated_guides() const {
  const double cap = static_cast<double>(*limits_.capacity_bytes);
  if (!any_saturated(trials_, cap)) return false;
  const auto alloc = allocated_limit(trials_, cap);
  return alloc && alloc->high > static_cast<double>(*largest_ok_) && alloc->low < static_cast<double>(*smallest_oom_) &&
         alloc->high - alloc->low <= 2 * static_cast<double>(kLongBracket);
}

bool Search::ran_long(std::uint64_t value) const {
  for (const auto& t : trials_)
    if (t.value == value && t.outcome == Outcome::Ok && t.steps >= limits_.confirm_steps) return true;
  return false;
}

std::optional<std::uint64_t> Search::next() const {
  if (confirming()) return largest_ok_;
  if (reason_ != StopReason::Running) return std::nullopt;
  if (trials_.empty()) return limits_.start;
  if (retry_) return retry_;
  if (auto v = guided()) return std::min(*v, limits_.max);
  if (!smallest_oom_) {  // doubling phase: every trial so far ran
    std::uint64_t last = *largest_ok_;
    return last > limits_.max / 2 ? limits_.max : last * 2;
  }
  // bisecting between the largest that ran and the smallest that did not
  return *largest_ok_ + (*smallest_oom_ - *largest_ok_) / 2;
}

void Search::out_of_memory_at(std::uint64_t value) {
  smallest_oom_ = std::min(smallest_oom_.value_or(value), value);
  // Below an OOM only: a value that ran above one that did not (dynamic shapes, a confirmation
  // that ran out later) is no answer.
  largest_ok_.reset();
  for (const auto& t : trials_)
    if (t.outcome == Outcome::Ok && t.value < *smallest_oom_) largest_ok_ = std::max(largest_ok_.value_or(0), t.value);
  confirmed_.reset();
  reason_ = largest_ok_ ? StopReason::Running : StopReason::FailsAtStart;
}

namespace {

// The job held (PyTorch's "this process has X in use") plus what it asked for well under the
// --gpu-memory it was given, yet the card had less than that request free: another process filled
// the card (a shared GPU, another job starting). Such an OOM says nothing about the value.
bool card_was_full(const Trial& t, std::optional<std::uint64_t> cap) {
  constexpr double kWellUnderCap = 0.9;
  if (t.outcome != Outcome::Oom || !cap) return false;
  const auto m = timeline::parse_oom_message(t.detail);
  if (!m || !m->in_use_bytes || !m->free_bytes || !m->requested_bytes) return false;
  const double held = static_cast<double>(*m->in_use_bytes) + static_cast<double>(*m->requested_bytes);
  return *m->free_bytes < *m->requested_bytes && held < kWellUnderCap * static_cast<double>(*cap);
}

}  // namespace

void Search::record(const Trial& trial) {
  trials_.push_back(trial);
  const bool retried = retry_ && *retry_ == trial.value;
  retry_.reset();
  if (!retried && card_was_full(trial, limits_.capacity_bytes)) {  // once per value: twice is the answer
    trials_.back().card_full = true;
    trials_.back().detail = "the card was full (another process), tried again: " + trial.detail;
    retry_ = trial.value;
    return;
  }
  // A trial that ran its steps while memory grew step after step leaks: every value will fail
  // eventually, so stop and say so. A trial that ran out of memory grew by definition (its first
  // steps allocate the optimizer state): its growth is no evidence of a leak.
  if (trial.memory_grew && trial.outcome == Outcome::Ok) {
    reason_ = StopReason::Leaks;
    return;
  }
  switch (trial.outcome) {
    case Outcome::Failed:
      reason_ = StopReason::OtherFailure;
      return;
    case Outcome::Ok:
      if (!trial.measured) {  // ran, but nothing says how much memory it held or whether it settled
        reason_ = StopReason::Unmeasured;
        return;
      }
      if (trial.confirmation) {
        confirmed_ = trial.value;
        return;
      }
      largest_ok_ = std::max(largest_ok_.value_or(0), trial.value);
      if (smallest_oom_ && *largest_ok_ >= *smallest_oom_) out_of_memory_at(*smallest_oom_);
      if (!smallest_oom_ && trial.value >= limits_.max) reason_ = StopReason::ReachedMax;
      break;
    case Outcome::Oom:
      out_of_memory_at(trial.value);
      if (reason_ == StopReason::FailsAtStart) return;
      break;
  }
  if (reason_ == StopReason::Running && largest_ok_ && smallest_oom_ && *smallest_oom_ - *largest_ok_ <= 1)
    reason_ = StopReason::Bracketed;
  // The cap leaves one trial for the confirmation, unless the answer's own trial ran its length.
  const int reserve = largest_ok_ && limits_.confirm_steps > 0 && !ran_long(*largest_ok_) ? 1 : 0;
  if (reason_ == StopReason::Running && limits_.max_trials > 0 && largest_ok_ &&
      static_cast<int>(trials_.size()) + reserve >= limits_.max_trials)
    reason_ = StopReason::TrialsSpent;
  // An answer whose own trial already ran the confirmation's length needs no second run.
  if (answered(reason_) && !confirmed_ && limits_.confirm_steps > 0 && ran_long(*largest_ok_)) confirmed_ = largest_ok_;
}

}  // namespace vramdoc::probe
