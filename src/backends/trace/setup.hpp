// What makes a job write allocation traces (run --trace, vramdoc trace DIR --env): the trace
// folder, made private, and the environment that has the CUDA driver load the tracer.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::backends {

struct TraceSetup {
  std::string directory;    // absolute; each traced process writes trace.<pid>.vdt here
  std::string tracer_path;  // absolute path of libvramdoc-tracer.so
  std::vector<std::pair<std::string, std::string>> environment;  // set these in the child
};

// Creates `dir` (private) if needed and finds libvramdoc-tracer.so beside the running executable
// (or in `tracer_dir` when given). `tracer_built`: this build has the tracer (cli/features.hpp).
// The error says how to get the tracer.
Result<TraceSetup> prepare_trace(const std::string& dir, bool tracer_built, const std::string& tracer_dir = "");

}  // namespace vramdoc::backends
