#include "core/probe/judge.hpp"

#include <algorithm>

#include "core/probe/growth.hpp"
#include "core/timeline/classify.hpp"

namespace vramdoc::probe {

void judge_trial(Trial& trial, const Result<timeline::Timeline>& timeline, const TrialEnd& end, const SettleRule& rule) {
  trial.exit_code = end.status;
  bool oom = false;
  std::optional<int> flat_from;  // where the readings last changed, however few steps followed
  if (timeline) {
    if (timeline->outcome != timeline::Outcome::Unknown && timeline->exit_status) trial.exit_code = *timeline->exit_status;
    for (const auto& sample : timeline->samples)
      trial.peak_bytes = std::max(trial.peak_bytes.value_or(0), sample.process_used_bytes);
    oom = timeline->outcome == timeline::Outcome::Oom || !timeline->messages.empty();
    if (!timeline->messages.empty()) trial.detail = timeline->messages.front();
    const auto settled = settling(*timeline, rule);
    trial.steps = std::max<int>(settled.steps, static_cast<int>(std::min<long>(end.steps_seen, 1 << 30)));
    trial.settled_at = settled.settled_at;
    flat_from = settled.flat_from;
    trial.outside_allocator_bytes = settled.outside_allocator_bytes;
    trial.allocated_peak_bytes = settled.allocated_peak_bytes;
    trial.measured = settled.measured;
    // Marked steps: the short-trial test on the readings at step ends. Without marks (a trial run
    // by time), the timeline classifier's leak verdict.
    const auto growth = step_growth(*timeline);
    if (growth.judged) {
      trial.memory_grew = growth.grew;
      trial.growth = growth.why;
    } else {
      trial.memory_grew = timeline::classify(*timeline).verdict == timeline::Verdict::Leak;
      trial.growth = trial.memory_grew ? "the timeline classifier's leak verdict" : growth.why;
    }
  }
  if (oom) {
    trial.outcome = Outcome::Oom;
  } else if (trial.exit_code == 0 || end.stopped_by_us) {
    trial.outcome = Outcome::Ok;
    // A job that ended by itself after its last step ran to its end: no later step can raise its
    // memory, so it counts as settled from where its readings last changed, however few steps
    // followed (H200, 2026-12-02: a 3-step job never met K = 5 and no trial of it "settled").
    trial.ran_to_end = !end.stopped_by_us && trial.exit_code == 0;
    if (trial.ran_to_end && !trial.settled_at) trial.settled_at = flat_from;
  } else {
    trial.outcome = Outcome::Failed;
    trial.detail = end.last_line;
  }
}

std::string substitute(const std::string& command_template, const std::string& name, std::uint64_t value) {
  std::string key = "{" + name + "}", out = command_template;
  for (std::size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1))
    out.replace(at, key.size(), std::to_string(value));
  return out;
}

std::function<std::optional<double>(std::uint64_t)> estimator_guide(estimator::JobModel job, const std::string& parameter) {
  return [job = std::move(job), parameter](std::uint64_t v) -> std::optional<double> {
    auto options = job.options;
    (parameter == "batch" ? options.batch : options.seq) = v;
    auto e = estimator::estimate(job.model, options);
    return e ? std::optional<double>(static_cast<double>(e->process_bytes)) : std::nullopt;
  };
}

}  // namespace vramdoc::probe
