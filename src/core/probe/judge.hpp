// What one probe trial says, from the timeline its `vramdoc run` wrote: the outcome and exit
// status (the timeline's end record, else the process's own), the peak, whether memory grew
// (the short-trial test on marked steps, else the timeline classifier). Pure: the trial is run
// by backends/probe/trials.hpp.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/estimator/model_source.hpp"
#include "core/probe/search.hpp"
#include "core/probe/settle.hpp"
#include "core/result.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::probe {

// How the trial's process ended, as the runner saw it.
struct TrialEnd {
  int status = 0;              // as a shell reports it
  bool stopped_by_us = false;  // enough steps, or the trial time ran out
  std::string last_line;       // the last non-empty line of its output (redacted), for a failure
  long steps_seen = 0;         // step lines counted in its output (the timeline's marks may lag the last one)
};

// Fills `trial`'s outcome, exit code, peak, growth, steps, settling (`rule`) and detail from its
// timeline (an error: the trial wrote none, e.g. it could not start) and how it ended.
void judge_trial(Trial& trial, const Result<timeline::Timeline>& timeline, const TrialEnd& end, const SettleRule& rule = {});

// Every {name} in `command_template` replaced by `value`.
std::string substitute(const std::string& command_template, const std::string& name, std::uint64_t value);

// With the job's model (probe --config / --model): the estimator's process peak at a value of
// `parameter` ("batch" or "seq"; the other one as the job gives it), which guides the first jumps.
std::function<std::optional<double>(std::uint64_t)> estimator_guide(estimator::JobModel job, const std::string& parameter);

}  // namespace vramdoc::probe
