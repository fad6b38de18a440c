// The Python side of `vramdoc run --trace-python`: what each Python process of the job wrote at
// exit (python.PID.json, docs/trace-format.md): PyTorch's live blocks grouped by the Python stack
// that allocated them. Parsing is bounded and never trusts the file; rendering returns strings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace vramdoc::trace {

struct PythonFrame {
  std::string file;
  std::uint32_t line = 0;
  std::string function;
  bool library = false;  // in the standard library, site-packages or torch
};

struct PythonGroup {
  std::uint32_t device = 0;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::vector<PythonFrame> frames;  // innermost first
};

// The out-of-memory error a record was taken at (PyTorch's OOM observer's arguments).
struct PythonOom {
  std::uint32_t device = 0;
  std::uint64_t requested_bytes = 0, device_allocated_bytes = 0, device_free_bytes = 0;
};

struct PythonStacks {
  std::string file;  // where it was read from
  std::int64_t pid = 0;
  std::optional<PythonOom> oom;  // set: taken at the process's first OOM error; else at exit
  std::string torch_version;
  std::string error;  // the hook's own failure, when it could not record
  std::uint64_t allocated_bytes = 0, peak_allocated_bytes = 0;
  std::vector<PythonGroup> groups;  // largest first
  std::uint64_t groups_left_out = 0;
};

// The records of one folder (DIR/python.*.json) and one line per file (or the folder itself)
// that could not be read.
struct PythonStackSet {
  std::vector<PythonStacks> processes;
  std::vector<std::string> problems;
};

// Limits on what a file may hold (larger files or lists are refused, not truncated silently).
constexpr std::size_t kMaxPythonStacksFileBytes = 64u << 20;
constexpr std::size_t kMaxPythonGroups = 10000;
constexpr std::size_t kMaxPythonFrames = 256;
constexpr std::size_t kMaxPythonText = 4096;

Result<PythonStacks> parse_python_stacks(std::string_view text);
// Records in reading order: by process, the OOM record before the exit record.
void sort_python_stacks(std::vector<PythonStacks>& records);

// The frame that names a group: the innermost one outside the libraries, else the innermost.
std::size_t python_call_site_index(const std::vector<PythonFrame>& frames);
std::string describe(const PythonFrame& frame);

// "Python lines holding CUDA memory": one table per record (at an OOM error, at exit),
// `max_groups` rows, the stacks of the first rows. `problems`: files that could not be read.
std::string render_python_stacks_text(const std::vector<PythonStacks>& processes, const std::vector<std::string>& problems,
                                      std::size_t max_groups = 10, std::size_t max_frames = 8);
nlohmann::json python_stacks_json(const std::vector<PythonStacks>& processes);

}  // namespace vramdoc::trace
