// Probe's trials: the job run once per value under `vramdoc run --no-report`, in its own process
// group, stopped after --steps step lines or --trial-time (SIGTERM, then SIGKILL after a grace
// period), judged from the timeline it wrote (core/probe/judge.hpp); and the search run trial by
// trial until it is done, the budget is spent or the user interrupts.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/probe/search.hpp"
#include "core/probe/settle.hpp"
#include "core/timeline/step_regex.hpp"

namespace vramdoc::backends {

struct TrialSettings {
  std::string self_exe;           // this vramdoc binary, to run `vramdoc run`
  std::string work_dir;           // where each trial's timeline and log go
  std::string interval = "20ms";  // sampling interval passed to run
  std::string step_regex;         // --step-regex, counted here and passed to run
  long steps = 0;                 // at least this many steps before a settled trial is stopped
  long max_steps = 0;             // stop the trial after this many steps, settled or not (0: no cap)
  bool stop_when_settled = true;  // stop once memory has settled (settle): off for the confirmation and a trial run long
  std::string file_suffix;        // after trial-VALUE in the trial's file names: "-confirm" for the confirmation
  probe::SettleRule settle;       // when a trial's memory counts as settled
  double trial_seconds = 0;       // stop the trial after this long (0: no limit)
  // --gpu-memory: the card the job is held to. Each trial's PyTorch allocator is capped at it less
  // the memory outside the allocator (the step hook, sitecustomize.py: VRAMDOC_GPU_MEMORY_BYTES),
  // so the driver's number stays within it as on a card of that size.
  std::optional<std::uint64_t> gpu_memory_bytes;
  std::optional<std::uint64_t> outside_allocator_bytes;  // what the trials so far measured outside it (the context)
};

// The environment that holds a trial's job to settings.gpu_memory_bytes (empty without it).
std::vector<std::pair<std::string, std::string>> gpu_memory_environment(const TrialSettings& settings);

// Runs one trial of `command` (a shell command line) and returns what happened: it stops once
// its memory has settled (and `steps` have run), at `max_steps`, at the trial time or when the
// job ends. Never throws.
probe::Trial run_trial(const TrialSettings& settings, const std::optional<timeline::StepRegex>& steps,
                       const std::string& command, std::uint64_t value);

// The search, run: each value it asks for substituted for {parameter} in `command_template` and
// tried (`steps`: settings.step_regex compiled), the answer's confirmation run for
// search.limits().confirm_steps steps, with a line before and after each trial through `progress`. True when it stopped early (the budget spent, SIGINT or SIGTERM): the report then
// says incomplete.
bool run_search(probe::Search& search, const TrialSettings& settings, const std::optional<timeline::StepRegex>& steps,
                const std::string& command_template, const std::string& parameter, double budget_seconds,
                const std::function<void(const std::string&)>& progress);

// Where the trials' files go: `keep` (created), else a new private temporary folder that the
// caller removes (`temporary` set).
Result<std::string> trial_folder(const std::string& keep, bool& temporary);

}  // namespace vramdoc::backends
