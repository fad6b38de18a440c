// The capture's trace: what python/vramdoc/_capture.py records while it runs a job with CUDA
// faked (format: docs/estimator.md, "The capture's trace"). The allocator-trace lines of
// scripts/gpu/alloc_trace.py (a SIZE ID STREAM [FRAMES], f ID; r / s / S / m / M / o are read and
// ignored, so a real run's trace parses too) plus `k OP STREAM THREAD INFO` where a kernel that
// takes library workspaces ran, and comment lines: `# phase NAME` after a phase's last event,
// `# note KIND WHERE: TEXT`, `# error WHERE TYPE: MESSAGE`, `# capture torch V ...`,
// `# steps N forwards M`, `# empty_cache`, `# end REASON`.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::capture {

struct Event {
  enum class Kind : std::uint8_t { Alloc, Free, Kernel, EmptyCache };
  Kind kind = Kind::Alloc;
  std::uint32_t stream = 0;  // Alloc, Kernel: CUDA streams numbered in order of first use
  std::uint32_t thread = 0;  // Kernel: 0 the job's thread, 1 autograd's (its own cuBLAS handle)
  std::uint64_t bytes = 0;   // Alloc: the request
  std::uint64_t id = 0;      // Alloc, Free
  std::uint32_t text = 0;    // Alloc: its Python frames; Kernel: the op (index into Trace::texts)
  std::uint32_t info = 0;    // Kernel: dtype and shapes of its tensors ("float32:64x1024,1024x4096")
};

// Events [previous phase's end, end) belong to phase `name`.
struct Phase {
  std::string name;
  std::size_t end = 0;
};

struct Note {
  std::string kind;   // value (a value read back), shape (a data-dependent shape), save, compile, ...
  std::string where;  // FILE:LINE in the job's code
  std::string text;   // what could not be faked and what was assumed
};

struct Trace {
  std::vector<Event> events;
  std::vector<std::string> texts{""};  // interned frames and op names; [0] is "none"
  std::vector<Phase> phases;
  std::vector<Note> notes;
  std::string end_reason;  // steps | exit | error | signal; empty: the file was cut off
  std::string error_where, error;
  std::string torch_version;
  std::uint64_t steps = 0, forwards = 0;
};

// A trace file is at most this large (a 7B model's three steps write about 40 MB).
constexpr std::size_t kMaxTraceBytes = std::size_t{4} << 30;

// Parses a trace; the error names the first line that is not one of the forms above.
Result<Trace> parse_trace(std::string_view text);

}  // namespace vramdoc::capture
