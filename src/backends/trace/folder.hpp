// A trace folder read back after the job (run --trace / --trace-python, analyze --trace-dir,
// vramdoc trace DIR): the allocation tracer's trace.PID.vdt files, analysed and symbolised
// (addr2line, out of process), the Python hook's python.PID.json files and its
// python.PID.oom.pickle snapshots. docs/trace.md.
#pragma once
#include <string>
#include <vector>

#include "core/report/build.hpp"
#include "core/result.hpp"
#include "core/snapshot/analysis.hpp"
#include "core/trace/python_stacks.hpp"
#include "core/trace/report.hpp"

namespace vramdoc::backends {

// Reads every DIR/trace.*.vdt (or DIR itself when it is a file) and symbolises the stacks its analysis names. The error is for a
// folder that cannot be read; a bad file becomes one of `problems`.
Result<trace::TraceSet> read_traces(const std::string& dir);

// Reads every DIR/python.*.json; bad files become `problems`, an unreadable DIR an error.
Result<trace::PythonStackSet> read_python_stacks(const std::string& dir);

// Reads and analyses every DIR/python.PID.oom.pickle (PyTorch's snapshot at a process's first
// OOM, docs/snapshots.md); a file that cannot be read adds a line to `problems`.
std::vector<snapshot::SnapshotReport> read_oom_snapshots(const std::string& dir, std::vector<std::string>& problems);

// What a report needs of the trace folder `dir` (core/report/build.hpp): its allocation traces
// when `traces`, the Python hook's files and OOM snapshots when `python`; `python_asked`: run
// --trace-python, whose report has the Python section even when the folder holds none.
report::TraceFolder read_trace_folder(const std::string& dir, bool traces, bool python, bool python_asked);

}  // namespace vramdoc::backends
