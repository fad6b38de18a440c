// Our timeline format, version 1 (docs/timeline-format.md): JSON Lines, a header line first,
// then one line per sample, mark, out-of-memory message, and an end line. Each function returns
// one "\n"-ended line; the writer appends and flushes it, so the file is readable while written.
#pragma once
#include <map>
#include <optional>
#include <string>
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
  std::map<std::string, std::string> environment;  // allocator settings the job saw; written as "env" when any
};

// The first line: version, name, device, capacity, columns, command, interval (and env when set).
std::string header_line(const Header& h);
// [t, process_used, device_used]; an unknown device_used is null.
std::string sample_line(const Sample& s, bool with_device_used = true);
// {"t": ..., "mark": "step 12"}
std::string mark_line(const Mark& m);
// {"t": ..., "oom_message": "..."}
std::string oom_message_line(double t_seconds, const std::string& text);
// `total_bytes`: the capacity of the GPUs the job used, once known (it overrides the header's).
std::string end_line(double t_seconds, Outcome outcome, std::optional<int> exit_status,
                     std::optional<std::uint64_t> total_bytes = std::nullopt);

// The whole timeline in our format (for tests and conversions).
std::string write_timeline(const Timeline& tl, const Header& h);

}  // namespace vramdoc::timeline
