// What `vramdoc run --trace` needs from the allocation tracer (issue 6): the environment that
// loads it into the job, and the report to print once the job has ended.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::cli {

struct TraceSetup {
  std::string directory;    // absolute; each traced process writes trace.<pid>.vdt here
  std::string tracer_path;  // absolute path of libvramdoc-tracer.so
  std::vector<std::pair<std::string, std::string>> environment;  // set these in the child
};

// Creates `dir` if needed and finds libvramdoc-tracer.so beside the running executable (or in
// `tracer_dir` when given). The error says how to get the tracer.
Result<TraceSetup> prepare_trace(const std::string& dir, const std::string& tracer_dir = "");

// Reads every DIR/trace.*.vdt, symbolises the stacks it reports (addr2line, out of process)
// and renders leaks and peak contributors by call site: text, or JSON when `json`.
Result<std::string> render_trace_report(const std::string& dir, bool json);

}  // namespace vramdoc::cli
