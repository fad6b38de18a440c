#include "backends/trace/folder.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "backends/trace/addr2line.hpp"
#include "core/input_file.hpp"
#include "core/snapshot/model.hpp"
#include "core/trace/reader.hpp"
#include "core/trace/symbolize.hpp"

namespace vramdoc::backends {

namespace fs = std::filesystem;

Result<trace::TraceSet> read_traces(const std::string& dir) {
  std::error_code ec;
  std::set<std::string> files;
  if (fs::is_regular_file(dir, ec)) {
    files.insert(dir);  // one trace file, whatever its name
  } else {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const auto name = entry.path().filename().string();
      if (name.starts_with("trace.") && name.ends_with(".vdt")) files.insert(entry.path().string());
    }
  }
  if (ec) return make_error("cannot read the trace directory " + dir + ": " + ec.message() + " (give a folder of trace.PID.vdt files or one .vdt file)");
  trace::TraceSet loaded;
  for (const auto& file : files) {
    auto t = trace::read_trace_file(file);
    if (t) loaded.processes.push_back(trace::symbolized_process(file, *t, addr2line_symbolize));
    else loaded.problems.push_back(t.error());
  }
  return loaded;
}

Result<trace::PythonStackSet> read_python_stacks(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return make_error("cannot read " + dir + ": " + ec.message());
  std::vector<fs::path> files;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("python.") && name.ends_with(".json") && entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  trace::PythonStackSet out;
  for (const auto& f : files) {
    auto text = read_input_file(f.string(), trace::kMaxPythonStacksFileBytes);
    if (!text) {
      out.problems.push_back(text.error());
      continue;
    }
    auto parsed = trace::parse_python_stacks(*text);
    if (!parsed) {
      out.problems.push_back(f.string() + ": " + parsed.error());
      continue;
    }
    parsed->file = f.string();
    out.processes.push_back(std::move(*parsed));
  }
  trace::sort_python_stacks(out.processes);
  return out;
}

std::vector<snapshot::SnapshotReport> read_oom_snapshots(const std::string& dir, std::vector<std::string>& problems) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("python.") && name.ends_with(".oom.pickle") && it->is_regular_file(ec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::vector<snapshot::SnapshotReport> out;
  for (const auto& f : files) {
    auto snap = snapshot::read_snapshot_file(f.string());
    if (snap) out.push_back(snapshot::analyze_snapshot(*snap, f.string()));
    else problems.push_back(snap.error());
  }
  return out;
}

report::TraceFolder read_trace_folder(const std::string& dir, bool traces, bool python, bool python_asked) {
  report::TraceFolder folder;
  folder.dir = dir;
  folder.python_asked = python_asked;
  if (traces) folder.traces = read_traces(dir);
  if (python) {
    folder.python = read_python_stacks(dir);
    folder.oom_snapshots = read_oom_snapshots(dir, folder.oom_problems);
  }
  return folder;
}

}  // namespace vramdoc::backends
