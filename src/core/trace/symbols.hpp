// Call stacks of a trace and their symbolisation, done afterwards and out of the traced
// process: core plans the lookups and parses `addr2line -a -f -C` output; the CLI runs it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/trace/reader.hpp"

namespace vramdoc::trace {

// The prefix tree of a trace: stack id -> return addresses, innermost first.
class StackTable {
 public:
  explicit StackTable(const Trace& trace);
  // Innermost first; empty for id 0 or an unknown id. Bounded by the tree's depth.
  std::vector<std::uint64_t> ips(std::uint32_t stack_id) const;

 private:
  std::unordered_map<std::uint32_t, FrameRecord> nodes_;
};

// One frame as a person reads it. Fields debug info could not give are empty / 0.
struct SourceFrame {
  std::uint64_t ip = 0;
  std::string module;    // file name of the module, "" when no module covers ip
  std::uint64_t file_address = 0;
  std::string function;
  std::string file;
  unsigned line = 0;
};

// The modules of a trace by address, built once: a lookup is a binary search (scanning every
// record per frame made a 20 MB trace take 55 s). Where ranges overlap, the last one recorded wins.
class ModuleMap {
 public:
  explicit ModuleMap(const Trace& trace);
  // The module whose executable range holds `ip`, if any.
  const ModuleRecord* find(std::uint64_t ip) const;

 private:
  struct Range {
    std::uint64_t end;
    std::size_t module;  // index into modules_
  };
  std::vector<ModuleRecord> modules_;
  std::map<std::uint64_t, Range> ranges_;  // disjoint: start -> (end, module)
};

// The build-id each module path had in the traced process (raw bytes; the last record of a path
// wins; empty when the trace has none, as version 1 traces).
std::map<std::string, std::string> module_build_ids(const Trace& trace);

// Whether the file now at a module's path may name its frames: `recorded` is the traced
// module's build-id, `on_disk` the file's (nullopt: it has none). Without a recorded id (a
// version 1 trace) the file is trusted. Otherwise nullopt when they agree, else the reason.
std::optional<std::string> module_file_mismatch(const std::string& recorded, const std::optional<std::string>& on_disk);

// What to look up: per module path, the file addresses (return address - 1 - load bias).
std::map<std::string, std::vector<std::uint64_t>> plan_symbolization(const ModuleMap& modules,
                                                                     const std::vector<std::uint64_t>& ips);

// Parses `addr2line -a -f -C -i` output: "0xADDR\nfunction\nfile:line\n" per address, then
// one more function and location per inlined caller, keyed by file address. The frame kept is the
// innermost one outside CUDA's headers (cuda_runtime.h's inline cudaMalloc template names no call
// site: its caller does). "??" stays empty.
std::unordered_map<std::uint64_t, SourceFrame> parse_addr2line(std::string_view output);

// Symbolised frames of `ips`, given addr2line's answers per module path (frames without
// answers keep module + file address).
std::vector<SourceFrame> resolve_frames(
    const ModuleMap& modules, const std::vector<std::uint64_t>& ips,
    const std::map<std::string, std::unordered_map<std::uint64_t, SourceFrame>>& answers);

// The index of the frame that names the call site: the first frame of the program's own code,
// past the CUDA driver, CUPTI, the tracer, the CUDA runtime (shared or static) and PyTorch's
// allocator (libc10*); for PyTorch called from Python, its binding (libtorch_python). 0 if none.
std::size_t call_site_index(const std::vector<SourceFrame>& frames);

// "function (file:line)" or "module+0xOFFSET" when there is no debug info; terminal_safe.
std::string describe(const SourceFrame& frame);

}  // namespace vramdoc::trace
