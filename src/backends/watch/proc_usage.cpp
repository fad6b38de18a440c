#include "backends/watch/proc_usage.hpp"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <set>

#include "core/units.hpp"

namespace vramdoc::backends {

namespace {

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// The whitespace-separated words of `text`.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != '\t') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::optional<std::uint64_t> number(std::string_view word) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(const std::string& text) {
  // Fields after the command's closing parenthesis, counted from 0 = field 3 (state) of proc(5).
  constexpr std::size_t kUtime = 11, kStime = 12, kStarttime = 19, kRss = 21;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  const auto fields = words(std::string_view(text).substr(close + 1));
  if (fields.size() <= kRss) return std::nullopt;
  auto utime = number(fields[kUtime]), stime = number(fields[kStime]);
  auto start = number(fields[kStarttime]), rss = number(fields[kRss]);
  if (!utime || !stime || !start || !rss) return std::nullopt;
  auto cpu = checked_add(*utime, *stime);
  if (!cpu) return std::nullopt;
  return ProcStat{*cpu, *start, *rss};
}

std::optional<double> parse_uptime(const std::string& text) {
  const auto fields = words(text);
  if (fields.empty()) return std::nullopt;
  double seconds = 0;
  auto [end, ec] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), seconds);
  if (ec != std::errc() || end != fields[0].data() + fields[0].size() || !(seconds >= 0)) return std::nullopt;
  return seconds;
}

ProcUnits proc_units() {
  ProcUnits units;
  if (long ticks = sysconf(_SC_CLK_TCK); ticks > 0) units.ticks_per_second = static_cast<double>(ticks);
  if (long page = sysconf(_SC_PAGESIZE); page > 0) units.page_bytes = static_cast<std::uint64_t>(page);
  return units;
}

std::map<std::uint32_t, watch::ProcessUsage> ProcessUsageTracker::sample(const std::vector<std::uint32_t>& pids,
                                                                         double now_s) {
  std::map<std::uint32_t, watch::ProcessUsage> out;
  std::map<std::uint32_t, Seen> seen;
  std::optional<double> uptime;
  if (auto line = read_line(proc_root_ + "/uptime")) uptime = parse_uptime(*line);
  for (std::uint32_t pid : std::set<std::uint32_t>(pids.begin(), pids.end())) {
    watch::ProcessUsage usage;
    auto line = read_line(proc_root_ + "/" + std::to_string(pid) + "/stat");
    auto stat = line ? parse_proc_stat(*line) : std::nullopt;
    if (stat) {
      usage.start_ticks = stat->start_ticks;
      usage.host_memory_bytes = saturating_mul(stat->rss_pages, units_.page_bytes);
      const double started_s = static_cast<double>(stat->start_ticks) / units_.ticks_per_second;
      if (uptime && *uptime >= started_s) usage.running_seconds = *uptime - started_s;
      auto before = previous_.find(pid);
      if (before != previous_.end() && before->second.start_ticks == stat->start_ticks &&
          stat->cpu_ticks >= before->second.cpu_ticks && now_s > before->second.at_s) {
        const double cpu_s = static_cast<double>(stat->cpu_ticks - before->second.cpu_ticks) / units_.ticks_per_second;
        usage.cpu_percent = 100.0 * cpu_s / (now_s - before->second.at_s);
      }
      seen[pid] = {stat->start_ticks, stat->cpu_ticks, now_s};
    }
    out[pid] = usage;
  }
  previous_ = std::move(seen);  // a PID gone from the list is forgotten (its number may be reused)
  return out;
}

}  // namespace vramdoc::backends
