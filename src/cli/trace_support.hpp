// What `vramdoc run --trace` needs from the allocation tracer (issue 6): the environment that
// loads it into the job, and the report to print once the job has ended.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <cstdint>
#include <optional>

#include "core/result.hpp"
#include "core/timeline/timeline.hpp"
#include "core/timeline/traced.hpp"
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

// The readable traces of a directory, symbolised, and what was wrong with the others.
struct LoadedTraces {
  std::vector<trace::ProcessTrace> processes;
  std::vector<std::string> problems;  // one line per DIR/trace.*.vdt that could not be read
};

// Reads every DIR/trace.*.vdt and symbolises the stacks its analysis names (addr2line, out of
// process). The error is for a directory that cannot be read; bad files become `problems`.
Result<LoadedTraces> load_traces(const std::string& dir);

// The traced bytes of DIR on `tl`'s clock (core/trace/overlay.hpp); empty when no trace could be
// read. `warnings` gets one line per problem (unreadable directory or file, no traces) for the
// CLI to print; the driver's report goes on without the trace.
std::optional<timeline::TracedSeries> overlay_from_dir(const std::string& dir, const timeline::Timeline& tl,
                                                        std::optional<std::uint64_t> recording_start_unix_ns,
                                                        std::vector<std::string>& warnings);

// A timeline report's JSON with a "trace" object added (overlay_json) when `traced` is given.
std::string with_trace_json(const std::string& report_json, const std::optional<timeline::TracedSeries>& traced);

// Reads every DIR/trace.*.vdt, symbolises the stacks it reports (addr2line, out of process)
// and renders leaks and peak contributors by call site: text, or JSON when `json`.
Result<std::string> render_trace_report(const std::string& dir, bool json);

}  // namespace vramdoc::cli
