// The job's accounting across its processes (issue 29): which processes hold device memory besides
// the training loops, with their bytes, and whether they accumulate.
#include <algorithm>
#include <map>

#include "core/timeline/accounting.hpp"
#include "core/timeline/job.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

constexpr double kArrivalGap = 1.0;     // seconds between two arrivals of processes
constexpr std::size_t kMinArrivals = 3;
constexpr std::size_t kMaxListed = 8;

struct Held {
  std::uint64_t peak = 0;
  double first = 0, last = 0;  // first and last reading holding memory
  bool holds = false;
};

Held held(const Timeline& tl) {
  Held h;
  for (const auto& s : tl.samples) {
    if (s.process_used_bytes == 0) continue;
    if (!h.holds) h.first = s.t_seconds, h.holds = true;
    h.last = s.t_seconds;
    h.peak = std::max(h.peak, s.process_used_bytes);
  }
  return h;
}

std::string gpu_of(const ProcessInfo& who) { return who.gpu ? " on GPU " + std::to_string(*who.gpu) : ""; }

}  // namespace

OtherProcesses other_processes(const std::vector<ProcessTimeline>& processes) {
  OtherProcesses out;
  std::vector<Held> h;
  for (const auto& p : processes) h.push_back(held(p.timeline));
  std::map<std::uint32_t, std::size_t> loop_of_pid;  // a pid's largest series with unit marks is its loop
  for (std::size_t i = 0; i < processes.size(); ++i) {
    if (processes[i].who.pid == 0 || unit_marks(processes[i].timeline).empty()) continue;
    auto [it, fresh] = loop_of_pid.emplace(processes[i].who.pid, i);
    if (!fresh && h[i].peak > h[it->second].peak) it->second = i;
  }
  for (const auto& [pid, i] : loop_of_pid) out.loops.push_back(i);
  if (out.loops.empty()) return out;  // nothing marked: no loop to tell the others from
  std::sort(out.loops.begin(), out.loops.end());
  double loop_start = 1e300, loop_end = 0;
  for (std::size_t i : out.loops) loop_start = std::min(loop_start, h[i].first), loop_end = std::max(loop_end, h[i].last);
  for (std::size_t i = 0; i < processes.size(); ++i)
    if (h[i].holds && !std::binary_search(out.loops.begin(), out.loops.end(), i)) out.others.push_back(i);
  if (out.others.empty()) return out;

  std::string loops, list;
  for (std::size_t i : out.loops) loops += (loops.empty() ? "" : ", ") + process_name(processes[i].who, false);
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < out.others.size(); ++k) {
    const auto& p = processes[out.others[k]];
    total += h[out.others[k]].peak;
    if (k >= kMaxListed) continue;
    const bool stray = loop_of_pid.count(p.who.pid) > 0;  // the loop's own process, on another GPU
    list += (list.empty() ? "" : ", ") + process_name(p.who, false) + (stray ? " (a stray context of that loop" + gpu_of(p.who) + ")" : "") +
            (p.who.command.empty() ? "" : " " + p.who.command) + " " + format_bytes(h[out.others[k]].peak);
  }
  if (out.others.size() > kMaxListed) list += ", and " + std::to_string(out.others.size() - kMaxListed) + " more";
  out.note = "besides the training loop" + std::string(out.loops.size() > 1 ? "s (" : " (") + loops + "), " + std::to_string(out.others.size()) +
             (out.others.size() > 1 ? " processes hold" : " process holds") + " device memory: " + list + "; " + format_bytes(total) +
             " in all at their peaks (DataLoader workers or helpers that made a CUDA context, a rank's stray context on GPU 0)";

  // Arrivals a second or more apart, every one still holding when the loops end: they accumulate.
  std::vector<double> starts;
  bool all_stay = true;
  for (std::size_t i : out.others) {
    if (h[i].first < loop_start || h[i].first > loop_end) continue;
    starts.push_back(h[i].first);
    all_stay &= h[i].last >= loop_end - kArrivalGap;
  }
  std::sort(starts.begin(), starts.end());
  std::size_t arrivals = starts.empty() ? 0 : 1;
  for (std::size_t k = 1; k < starts.size(); ++k) arrivals += starts[k] - starts[k - 1] >= kArrivalGap;
  if (arrivals >= kMinArrivals && all_stay)
    out.accumulating = std::to_string(starts.size()) + " processes started one after another while the training loop ran (" +
                       std::to_string(arrivals) + " arrivals), each holding device memory (" + format_bytes(total) +
                       " in all), and none exited: the job grows by a process at a time, though each is flat on its own "
                       "(a helper started per epoch and never stopped: 子进程的显存没有被正确回收)";
  return out;
}

}  // namespace vramdoc::timeline
