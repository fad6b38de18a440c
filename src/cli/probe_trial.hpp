// One probe trial: the job run once under `vramdoc run`, stopped after --steps steps or
// --trial-time, and what its timeline says (outcome, peak, whether memory grew).
#pragma once
#include <string>

#include "core/probe/search.hpp"

namespace vramdoc::cli {

struct TrialSettings {
  std::string self_exe;           // this vramdoc binary, to run `vramdoc run`
  std::string work_dir;           // where each trial's timeline and log go
  std::string interval = "20ms";  // sampling interval passed to run
  std::string step_regex;         // a line of the job's output that ends a step (checked: LineMatcher)
  long steps = 0;                 // stop the trial after this many steps (0: let it finish)
  double trial_seconds = 0;       // stop the trial after this long (0: no limit)
};

// Substitutes every {name} in `command_template` by `value`.
std::string substitute(const std::string& command_template, const std::string& name, std::uint64_t value);

// Runs one trial of `command` (a shell command line) and returns what happened. Never throws.
probe::Trial run_trial(const TrialSettings& settings, const std::string& command, std::uint64_t value);

// Asks the trial in progress (if any) to stop: for SIGINT / SIGTERM handlers.
void interrupt_trials();
// True once interrupt_trials() was called.
bool trials_interrupted();

}  // namespace vramdoc::cli
