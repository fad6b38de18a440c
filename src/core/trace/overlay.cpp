#include "core/trace/overlay.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::trace {

namespace {

std::uint64_t earliest_start(const std::vector<ProcessTrace>& processes) {
  std::uint64_t start = std::numeric_limits<std::uint64_t>::max();
  for (const auto& p : processes) start = std::min(start, p.start_unix_ns);
  return processes.empty() ? 0 : start;
}

// The top growing / alive-at-exit call sites over every process, largest first; stacks that end
// in the same call site are one row.
std::vector<timeline::TracedSite> top_sites(const std::vector<ProcessTrace>& processes, std::size_t max_sites) {
  std::vector<timeline::TracedSite> sites;
  auto add = [&](const ProcessTrace& p, const AllocGroup& g, const char* why) {
    const auto where = call_site_name(p, g.stack_id);
    for (auto& site : sites)
      if (site.pid == p.pid && site.why == why && site.where == where) {
        site.bytes = saturating_add(site.bytes, g.bytes), site.count += g.count;  // a hostile trace's sums saturate
        return;
      }
    sites.push_back({where, why, g.bytes, g.count, p.pid});
  };
  for (const auto& p : processes) {
    for (const auto& g : p.analysis.accumulating) add(p, g, "growing");
    for (const auto& g : p.analysis.leaks) add(p, g, "alive at exit");
  }
  std::stable_sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (sites.size() > max_sites) sites.resize(max_sites);
  return sites;
}

}  // namespace

std::vector<TimelinePoint> merge_processes(const std::vector<ProcessTrace>& processes, std::size_t max_points) {
  max_points = std::max<std::size_t>(max_points, 2);
  const std::uint64_t start = earliest_start(processes);
  // (time, process, bytes) steps, in time order; the sum is a step function of them.
  std::vector<std::tuple<double, std::size_t, std::uint64_t>> steps;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const double shift = static_cast<double>(processes[i].start_unix_ns - start) * 1e-9;
    for (const auto& point : processes[i].analysis.timeline) steps.emplace_back(shift + point.t_s, i, point.bytes);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<TimelinePoint> out;
  if (steps.empty()) return out;
  const double t0 = std::get<0>(steps.front()), span = std::max(std::get<0>(steps.back()) - t0, 1e-9);
  std::vector<std::uint64_t> current(processes.size(), 0);
  __extension__ unsigned __int128 sum = 0;  // the processes' sum may pass 2^64 (a hostile trace): shown saturated
  std::size_t bucket = 0;
  for (const auto& [t, i, bytes] : steps) {
    sum = sum - current[i] + bytes;
    current[i] = bytes;
    const std::uint64_t shown = sum > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
                                                                                 : static_cast<std::uint64_t>(sum);
    const auto b = std::min(max_points - 1, static_cast<std::size_t>((t - t0) / span * static_cast<double>(max_points - 1)));
    if (out.empty() || b != bucket) out.push_back({t, shown}), bucket = b;
    else out.back().bytes = std::max(out.back().bytes, shown);
  }
  return out;
}

double trace_offset_seconds(const timeline::Timeline& tl, const std::vector<TimelinePoint>& merged,
                            std::optional<std::uint64_t> recording_start_unix_ns, std::uint64_t trace_start_unix_ns) {
  if (recording_start_unix_ns)
    return (static_cast<double>(trace_start_unix_ns) - static_cast<double>(*recording_start_unix_ns)) * 1e-9;
  double driver_anchor = tl.samples.empty() ? 0 : tl.samples.front().t_seconds;
  for (const auto& s : tl.samples)
    if (s.process_used_bytes > tl.samples.front().process_used_bytes) { driver_anchor = s.t_seconds; break; }
  double trace_anchor = merged.empty() ? 0 : merged.front().t_s;
  for (const auto& p : merged)
    if (p.bytes > 0) { trace_anchor = p.t_s; break; }
  return driver_anchor - trace_anchor;
}

timeline::TracedSeries build_overlay(const std::vector<ProcessTrace>& processes, const timeline::Timeline& tl,
                                     std::optional<std::uint64_t> recording_start_unix_ns, std::size_t max_points,
                                     std::size_t max_sites) {
  timeline::TracedSeries s;
  s.processes = processes.size();
  const auto merged = merge_processes(processes, max_points);
  const double offset = trace_offset_seconds(tl, merged, recording_start_unix_ns, earliest_start(processes));
  s.alignment = recording_start_unix_ns
                    ? "wall clock: the trace's start time against the recording's"
                    : "approximate: the first traced allocation placed at the first rise of the driver's number";
  for (const auto& p : merged) {
    s.points.push_back({p.t_s + offset, p.bytes});
    if (p.bytes > s.peak_bytes) s.peak_bytes = p.bytes, s.peak_seconds = p.t_s + offset;
  }
  for (const auto& p : processes) {
    s.live_bytes_at_end = saturating_add(s.live_bytes_at_end, p.analysis.live_bytes);
    s.pytorch |= p.pytorch;
  }
  s.top_sites = top_sites(processes, max_sites);
  return s;
}

std::string render_overlay_text(const timeline::TracedSeries& s, const timeline::Timeline& tl) {
  std::uint64_t driver_peak = 0;
  for (const auto& sample : tl.samples) driver_peak = std::max(driver_peak, sample.process_used_bytes);
  std::string out = "\nTraced allocations (" + std::to_string(s.processes) + " process" + (s.processes == 1 ? "" : "es") + "):\n";
  out += "  traced peak " + format_bytes(s.peak_bytes) + " at " + fixed(s.peak_seconds, 2) + " s vs driver peak " +
         format_bytes(driver_peak);
  if (driver_peak > 0) out += " (" + fixed(100.0 * static_cast<double>(s.peak_bytes) / static_cast<double>(driver_peak), 0) + "% traced)";
  out += "\n  traced bytes alive at the end " + format_bytes(s.live_bytes_at_end) + "\n";
  out += "  clocks aligned by " + s.alignment + "\n";
  for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
    const auto& site = s.top_sites[i];
    out += "  " + std::to_string(i + 1) + ". " + format_bytes(site.bytes) + " in " + std::to_string(site.count) + (site.count == 1 ? " allocation, " : " allocations, ") +
           site.why + ": " + site.where + "\n";
  }
  if (s.pytorch)
    out += "  PyTorch: the traced bytes are the caching allocator's segments, not tensors; for tensors run the job "
           "again with PYTORCH_NO_CUDA_MEMORY_CACHING=1\n";
  return out;
}

nlohmann::json overlay_json(const timeline::TracedSeries& s) {
  auto points = nlohmann::json::array();
  for (const auto& p : s.points) points.push_back({p.t_seconds, p.bytes});
  auto sites = nlohmann::json::array();
  for (const auto& site : s.top_sites)
    sites.push_back({{"where", site.where}, {"why", site.why}, {"bytes", site.bytes}, {"count", site.count}, {"pid", site.pid}});
  return {{"processes", s.processes}, {"peak_bytes", s.peak_bytes}, {"peak_t", s.peak_seconds},
          {"live_bytes_at_end", s.live_bytes_at_end}, {"pytorch", s.pytorch}, {"alignment", s.alignment},
          {"timeline", points}, {"top_call_sites", sites}};
}

}  // namespace vramdoc::trace
