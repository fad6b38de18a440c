// Our timeline format, version 2 (docs/timeline-format.md): JSON Lines, a header line first,
// then lines for series (a process on a GPU), samples, marks, out-of-memory messages, and an end
// line. Each function returns one "\n"-ended line; the writer appends and flushes it, so the file
// is readable while written. The sample lines of a recording come from TickWriter (ticks.hpp).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// What the header line says about the recording.
struct Header {
  std::string name;
  std::optional<std::string> device;
  std::optional<std::uint64_t> total_bytes;
  std::vector<std::string> command;
  double interval_seconds = 0;
  bool device_used = true;  // whether samples carry the device_used column
  std::string host;                          // the machine's name
  std::optional<double> start_unix_seconds;  // the wall clock at t = 0 (aligns several files)
  std::vector<GpuInfo> gpus;                 // with GPUs, samples carry the series and gpu_used columns
  double heartbeat_seconds = 1;              // an unchanged sample is written at least this often
  std::map<std::string, std::string> environment;  // allocator settings the job saw; written as "env" when any
};

// The first line: version, name, host, start, device, capacity, GPUs, columns, command, interval
// (and env when set).
std::string header_line(const Header& h);
// [t, process_used, device_used]; an unknown device_used is null.
std::string sample_line(const Sample& s, bool with_device_used = true);
// {"series": {"id": N, "pid": ..., "gpu": ..., "rank": ..., "local_rank": ..., "command": ...}}
std::string series_line(std::size_t id, const ProcessInfo& who);
// {"t": ..., "mark": "step 12"}, with "pid", "allocated", "reserved" when known
std::string mark_line(const Mark& m);
// {"t": ..., "oom_message": "..."}
std::string oom_message_line(double t_seconds, const std::string& text);
// `total_bytes`: the capacity of the GPUs the job used, once known (it overrides the header's).
std::string end_line(double t_seconds, Outcome outcome, std::optional<int> exit_status,
                     std::optional<std::uint64_t> total_bytes = std::nullopt);

// The whole timeline in our format, without per-process series (for tests and conversions).
std::string write_timeline(const Timeline& tl, const Header& h);

// The most of a program's name that goes into a default timeline name: a 250-character name
// made one longer than a file name may be (NAME_MAX, 255), and the job was refused.
inline constexpr std::size_t kMaxProgramNameInFileName = 64;

// run's default timeline name, "vramdoc-PROGRAM-STAMP.jsonl": PROGRAM is `program`'s file name
// cut to kMaxProgramNameInFileName bytes (whole characters), with anything but letters, digits,
// '.', '_', '-', '+' and printable non-ASCII characters as '_'.
std::string default_file_name(std::string_view program, std::string_view stamp);

// Seconds rounded to 0.1 ms, as every line writes them.
double round_seconds(double t);

}  // namespace vramdoc::timeline
