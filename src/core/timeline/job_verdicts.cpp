// The job's verdict from its processes' verdicts, and the sentence that names who does what.
#include <algorithm>
#include <map>
#include <set>

#include "core/timeline/classify.hpp"
#include "core/timeline/job.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

// Worst first. Inconclusive is not a verdict on the job unless no process has a definite one.
int severity(Verdict v) {
  switch (v) {
    case Verdict::Leak: return 0;
    case Verdict::Insufficient: return 1;
    case Verdict::Fragmentation: return 2;
    case Verdict::Plateau: return 3;
    case Verdict::Stable: return 4;
    case Verdict::Inconclusive: break;
  }
  return 5;
}

// What one process does, after its name: "leaks 62.50 MiB per step".
std::string phrase(const Diagnosis& d) {
  const auto& ev = d.evidence;
  switch (d.verdict) {
    case Verdict::Leak:
      if (ev.growth_bytes_per_step) return "leaks " + format_bytes(std::uint64_t(std::max(0.0, *ev.growth_bytes_per_step))) + " per step";
      if (ev.growth_bytes_per_second) return "leaks " + format_bytes(std::uint64_t(std::max(0.0, *ev.growth_bytes_per_second))) + " per second";
      return "leaks";
    case Verdict::Insufficient: return "ran out of memory: too big for its GPU";
    case Verdict::Fragmentation: return "ran out of memory: fragmentation";
    case Verdict::Plateau: return "plateau";
    case Verdict::Stable: return "stable";
    case Verdict::Inconclusive: break;
  }
  return "inconclusive";
}

// The verdict of a group of processes named together: "ranks 0, 2-7 stable".
std::string group_word(Verdict v) {
  switch (v) {
    case Verdict::Leak: return "leak";
    case Verdict::Insufficient: return "ran out of memory";
    case Verdict::Fragmentation: return "ran out of memory (fragmentation)";
    case Verdict::Plateau: return "plateau";
    case Verdict::Stable: return "stable";
    case Verdict::Inconclusive: break;
  }
  return "inconclusive";
}

// "rank 0", "ranks 0, 2-7", "pids 12, 40"; with several hosts, each host's on its own.
std::string group_names(const std::vector<const ProcessVerdict*>& group, bool with_host) {
  std::map<std::pair<std::string, bool>, std::vector<long>> by;  // (host, has rank) -> numbers
  for (const auto* p : group) by[{with_host ? p->who.host : "", p->who.rank.has_value()}].push_back(p->who.rank ? *p->who.rank : long(p->who.pid));
  std::string out;
  for (auto& [key, numbers] : by) {
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    const std::string noun = key.second ? "rank" : "pid";
    out += (out.empty() ? "" : ", ") + (key.first.empty() ? "" : key.first + " ") + noun + (numbers.size() > 1 ? "s " : " ") + compress_ranges(numbers);
  }
  return out;
}

std::string job_summary(const JobVerdicts& j) {
  std::set<std::string> hosts;
  for (const auto& p : j.processes) hosts.insert(p.who.host);
  const bool with_host = hosts.size() > 1;
  std::map<int, std::vector<const ProcessVerdict*>> by_verdict;
  for (const auto& p : j.processes) by_verdict[severity(p.diagnosis.verdict)].push_back(&p);
  std::string out;
  for (const auto& [rank, group] : by_verdict) {
    const Verdict v = group.front()->diagnosis.verdict;
    const bool one_by_one = (is_problem(v) && group.size() <= 3) || group.front()->who.pid == 0;
    for (std::size_t k = 0; k < group.size() && one_by_one; ++k)
      out += (out.empty() ? "" : "; ") + process_name(group[k]->who, with_host) + " " + phrase(group[k]->diagnosis);
    if (!one_by_one) out += (out.empty() ? "" : "; ") + group_names(group, with_host) + " " + group_word(v);
  }
  return out;
}

}  // namespace

bool is_problem(Verdict v) { return severity(v) <= 2; }

std::string compress_ranges(std::vector<long> numbers) {
  std::sort(numbers.begin(), numbers.end());
  std::string out;
  for (std::size_t i = 0; i < numbers.size();) {
    std::size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(numbers[i]) + (j > i ? "-" + std::to_string(numbers[j]) : "");
    i = j + 1;
  }
  return out;
}

std::string process_name(const ProcessInfo& who, bool with_host) {
  const std::string host = with_host && !who.host.empty() ? who.host + " " : "";
  if (who.pid == 0) return host + "the job" + (who.command.empty() ? "" : " (" + who.command + ")");
  const std::string gpu = who.gpu ? ", GPU " + std::to_string(*who.gpu) : "";
  if (who.rank) return host + "rank " + std::to_string(*who.rank) + " (pid " + std::to_string(who.pid) + gpu + ")";
  return host + "pid " + std::to_string(who.pid) + (who.gpu ? " (GPU " + std::to_string(*who.gpu) + ")" : "");
}

JobVerdicts judge_processes(const std::vector<ProcessTimeline>& processes) {
  JobVerdicts j;
  // The job's processes share one budget of grid points: judging many stays bounded (issue 25).
  const std::size_t grid = std::clamp(kJobGridPoints / std::max<std::size_t>(1, processes.size()), kMinGridPoints, kMaxGridPoints);
  for (const auto& p : processes) {
    j.processes.push_back({p.who, p.gpu_uuid, classify(p.timeline, std::nullopt, grid)});
    if (!p.timeline.messages.empty() && processes.size() > 1)
      j.notes.push_back("the out-of-memory message is given to " + process_name(p.who, false) +
                        ", the process closest to its GPU's capacity");
  }
  for (std::size_t i = 0; i < j.processes.size(); ++i) {
    const Verdict v = j.processes[i].diagnosis.verdict;
    if (!j.worst || severity(v) < severity(j.processes[*j.worst].diagnosis.verdict)) j.worst = i;
  }
  if (j.worst) j.verdict = j.processes[*j.worst].diagnosis.verdict;
  j.summary = job_summary(j);
  const OtherProcesses others = other_processes(processes);
  if (!others.note.empty()) j.notes.push_back(others.note);
  if (!others.accumulating.empty() && severity(Verdict::Leak) < severity(j.verdict)) {
    j.verdict = Verdict::Leak;
    j.accumulating = others.accumulating;
    j.summary = "processes accumulate: " + others.accumulating + "; " + j.summary;
  }
  return j;
}

}  // namespace vramdoc::timeline
