#include "core/timeline/marker.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

#include "core/timeline/reader.hpp"

namespace vramdoc::timeline {

namespace {

// A whole-token decimal number no larger than `max`; anything else is empty.
std::optional<std::uint64_t> plain_number(std::string_view text, std::uint64_t max) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v > max) return std::nullopt;
  return v;
}

// Reads `token` into `m` when it is one of the marker fields; false when it is label text.
bool take_field(std::string_view token, Mark& m) {
  const std::size_t eq = token.find('=');
  if (eq == std::string_view::npos) return false;
  const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
  const auto max_bytes = static_cast<std::uint64_t>(kMaxBytes);
  if (key == "allocated") m.allocated_bytes = plain_number(value, max_bytes);
  else if (key == "reserved") m.reserved_bytes = plain_number(value, max_bytes);
  else if (key == "peak") m.allocated_peak_bytes = plain_number(value, max_bytes);
  else if (key == "pid") {
    if (auto pid = plain_number(value, 0xFFFFFFFFu); pid && *pid > 0) m.pid = static_cast<std::uint32_t>(*pid);
  } else if (key != "rank") {
    return false;
  }
  return true;
}

}  // namespace

std::optional<Mark> parse_marker_line(std::string_view line) {
  if (line.starts_with("\xef\xbb\xbf")) line.remove_prefix(3);  // a byte-order mark (PowerShell's Out-File writes one)
  Mark m;
  std::string label;
  bool had_fields = false;
  for (std::size_t pos = 0; pos < line.size();) {
    const std::size_t start = line.find_first_not_of(" \t\r", pos);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t\r", start), line.size());
    const std::string_view token = line.substr(start, end - start);
    pos = end;
    if (take_field(token, m)) had_fields = true;
    else label += (label.empty() ? "" : " ") + std::string(token);
  }
  if (label.empty()) return std::nullopt;
  m.label = had_fields ? label : std::string(line);
  if (m.label.size() > 200) m.label.resize(200);
  return m;
}

}  // namespace vramdoc::timeline
