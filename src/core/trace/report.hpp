// The trace report: leaks and peak contributors by call site, as text and as JSON.
// Renderers return strings; only the CLI writes them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/trace/analysis.hpp"
#include "core/trace/symbols.hpp"

namespace vramdoc::trace {

// One traced process, analysed and symbolised.
struct ProcessTrace {
  std::string file;   // the .vdt file it came from
  std::uint32_t pid = 0;
  bool truncated = false;
  bool pytorch = false;  // the process loaded PyTorch's CUDA libraries
  TraceAnalysis analysis;
  std::map<std::uint32_t, std::vector<SourceFrame>> stacks;  // the stacks the groups name
  std::uint64_t start_unix_ns = 0;  // wall clock when its trace started (the file header's)
  std::vector<std::string> warnings;  // e.g. a module whose file changed since the trace
};

// The traces of one folder (DIR/trace.*.vdt): the readable ones, analysed and symbolised, and one
// line per file (or the folder itself) that could not be read.
struct TraceSet {
  std::vector<ProcessTrace> processes;
  std::vector<std::string> problems;
};

// True when the traced process had PyTorch's CUDA allocator loaded (libc10_cuda).
bool uses_pytorch(const Trace& trace);
// "device", "pitch", "managed", "async", "vmm", "vmm-map", "pool".
const char* kind_name(MemKind kind);
// The frame that names the call site of `stack_id` ("(no stack)" when none).
std::string call_site_name(const ProcessTrace& p, std::uint32_t stack_id);
// Every stack id the analysis' groups name.
std::vector<std::uint32_t> group_stacks(const TraceAnalysis& analysis);

// A person's report; `max_groups` rows per table, `max_frames` frames per stack.
std::string render_trace_text(const std::vector<ProcessTrace>& processes, std::size_t max_groups = 10,
                              std::size_t max_frames = 8);
// Everything, for tools: groups with full symbolised stacks and the timeline.
nlohmann::json trace_report_json(const std::vector<ProcessTrace>& processes);

}  // namespace vramdoc::trace
