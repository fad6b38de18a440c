// What `vramdoc run --trace` and `vramdoc trace` need from the allocation tracer: the environment
// that loads it into a job, and the job's traces read back, analysed and symbolised.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/trace/report.hpp"

namespace vramdoc::cli {

struct TraceSetup {
  std::string directory;    // absolute; each traced process writes trace.<pid>.vdt here
  std::string tracer_path;  // absolute path of libvramdoc-tracer.so
  std::vector<std::pair<std::string, std::string>> environment;  // set these in the child
};

// Creates `dir` if needed and finds libvramdoc-tracer.so beside the running executable (or in
// `tracer_dir` when given). The error says how to get the tracer.
Result<TraceSetup> prepare_trace(const std::string& dir, const std::string& tracer_dir = "");

// Reads every DIR/trace.*.vdt and symbolises the stacks its analysis names (addr2line, out of
// process). The error is for a directory that cannot be read; bad files become `problems`.
Result<trace::TraceSet> load_traces(const std::string& dir);

}  // namespace vramdoc::cli
