// What `vramdoc run --trace-python` needs: the Python hook written into the trace folder with
// the environment that loads it, and the report of what the job's Python processes wrote.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/trace/python_stacks.hpp"

namespace vramdoc::cli {

// Writes DIR/python-hook-XXXXXX/sitecustomize.py (DIR created private, or refused when another
// user could write it) and returns the variables that make the job's Python load it: PYTHONPATH
// (the hook first, then the caller's) and VRAMDOC_PYTHON_TRACE_DIR.
Result<std::vector<std::pair<std::string, std::string>>> prepare_python_hook(const std::string& dir);

// The step hook alone (run's default, without --trace-python): the hook written into a new
// private folder (mode 0700, under $TMPDIR) and the variables that load it with its step marks
// on: PYTHONPATH (the hook first) and VRAMDOC_STEP_HOOK=1. The caller removes `folder` after the job.
struct StepHook {
  std::string folder;
  std::vector<std::pair<std::string, std::string>> environment;
};
Result<StepHook> prepare_step_hook();

// Reads every DIR/python.*.json; bad files become `problems`, an unreadable DIR an error.
Result<trace::PythonStackSet> load_python_stacks(const std::string& dir);

}  // namespace vramdoc::cli
