#include "core/timeline/job.hpp"

#include <algorithm>
#include <tuple>

#include "core/timeline/classify.hpp"

namespace vramdoc::timeline {

namespace {

void shift(std::vector<Sample>& samples, double by) {
  for (auto& s : samples) s.t_seconds += by;
}

// The series that ran out of memory: the highest peak against its GPU's capacity (bytes alone
// when a capacity is unknown).
std::size_t out_of_memory_series(const Timeline& tl, const std::vector<std::optional<std::uint64_t>>& capacity) {
  std::size_t best = 0;
  double best_share = -1;
  for (std::size_t i = 0; i < tl.processes.size(); ++i) {
    std::uint64_t peak = 0;
    for (const auto& s : tl.processes[i].samples) peak = std::max(peak, s.process_used_bytes);
    const double share = capacity[i] && *capacity[i] ? double(peak) / double(*capacity[i]) : double(peak) / 1e18;
    if (share > best_share) best_share = share, best = i;
  }
  return best;
}

// Marks for process `pid`: its own; the job's untagged step marks when it has none of its own;
// the job's other untagged marks, except "oom", which only the process that ran out gets.
std::vector<Mark> marks_for(const Timeline& tl, std::uint32_t pid, bool ran_out) {
  const bool own_steps = std::any_of(tl.marks.begin(), tl.marks.end(),
                                     [&](const Mark& m) { return m.pid == pid && step_number(m.label); });
  std::vector<Mark> out;
  for (const auto& m : tl.marks) {
    if (m.pid) {
      if (*m.pid == pid) out.push_back(m);
    } else if (step_number(m.label)) {
      if (!own_steps) out.push_back(m);
    } else if (m.label != "oom" || ran_out) {
      out.push_back(m);
    }
  }
  return out;
}

}  // namespace

std::vector<ProcessTimeline> split_by_process(const Timeline& tl, double shift_seconds) {
  std::vector<ProcessTimeline> out;
  if (tl.processes.empty()) {  // the whole job as one
    ProcessTimeline p{{tl.host, 0, std::nullopt, std::nullopt, std::nullopt, tl.name}, "", tl};
    shift(p.timeline.samples, shift_seconds);
    for (auto& m : p.timeline.marks) m.t_seconds += shift_seconds;
    out.push_back(std::move(p));
    return out;
  }
  std::vector<std::optional<std::uint64_t>> capacity;
  std::vector<const GpuInfo*> gpu_of;
  for (const auto& s : tl.processes) {
    const auto g = std::find_if(tl.gpus.begin(), tl.gpus.end(), [&](const GpuInfo& x) { return s.who.gpu && x.index == *s.who.gpu; });
    gpu_of.push_back(g == tl.gpus.end() ? nullptr : &*g);
    capacity.push_back(g == tl.gpus.end() ? std::nullopt : g->total_bytes);
  }
  const bool oom = tl.outcome == Outcome::Oom || !tl.messages.empty();
  const std::size_t ran_out = out_of_memory_series(tl, capacity);
  for (std::size_t i = 0; i < tl.processes.size(); ++i) {
    const auto& series = tl.processes[i];
    ProcessTimeline p;
    p.who = series.who;
    if (gpu_of[i] && gpu_of[i]->uuid) p.gpu_uuid = *gpu_of[i]->uuid;
    Timeline& t = p.timeline;
    t.name = series.who.command.empty() ? tl.name : series.who.command;
    t.host = tl.host;
    t.device = gpu_of[i] && gpu_of[i]->name ? gpu_of[i]->name : tl.device;
    t.total_bytes = capacity[i] ? capacity[i] : tl.gpus.size() <= 1 ? tl.total_bytes : std::nullopt;
    t.exit_status = tl.exit_status;
    t.interval_seconds = tl.interval_seconds;
    t.command = tl.command;          // the job's: what the classifier looks for a framework in
    t.environment = tl.environment;
    t.samples = series.samples;
    t.thinned = series.thinned;
    shift(t.samples, shift_seconds);
    t.marks = marks_for(tl, series.who.pid, oom && i == ran_out);
    for (auto& m : t.marks) m.t_seconds += shift_seconds;
    if (oom && i == ran_out) t.messages = tl.messages, t.outcome = Outcome::Oom;
    else t.outcome = tl.outcome == Outcome::Oom ? Outcome::Failed : tl.outcome;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ProcessTimeline> job_processes(const std::vector<Timeline>& files, std::vector<std::string>& notes) {
  std::optional<double> earliest;
  for (const auto& f : files)
    if (f.start_unix_seconds) earliest = std::min(earliest.value_or(*f.start_unix_seconds), *f.start_unix_seconds);
  std::vector<ProcessTimeline> out;
  for (const auto& f : files) {
    double by = 0;
    if (f.start_unix_seconds) by = *f.start_unix_seconds - *earliest;
    else if (files.size() > 1) notes.push_back(f.name + " has no wall-clock start (a version 1 timeline): its t = 0 is taken as the others' start");
    auto part = split_by_process(f, by);
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  if (files.size() > 1 && earliest) notes.push_back("time axes aligned by each file's wall-clock start");
  auto key = [](const ProcessTimeline& p) {  // ranks in order, then the rest by host and pid
    return std::make_tuple(!p.who.rank.has_value(), p.who.rank.value_or(0), p.who.host, p.who.pid, p.who.gpu.value_or(0));
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return out;
}

JobJudgement judge_job(std::vector<Timeline> files, const std::optional<TraceEvidence>& trace) {
  JobJudgement out;
  if (files.size() == 1 && files.front().processes.size() <= 1) {  // one process: the job is its own headline
    const Timeline& tl = files.front();
    // its own steps (split_by_process's marks, without copying a long recording's samples)
    std::optional<std::vector<Mark>> own;
    if (tl.processes.size() == 1) own = marks_for(tl, tl.processes.front().who.pid, tl.outcome == Outcome::Oom || !tl.messages.empty());
    out.headline = std::move(files.front());
    if (own) out.headline.marks = std::move(*own);
    out.diagnosis = classify(out.headline, trace);
    return out;
  }
  std::vector<std::string> notes;
  auto processes = job_processes(files, notes);
  JobVerdicts verdicts = judge_processes(processes);
  verdicts.notes.insert(verdicts.notes.begin(), notes.begin(), notes.end());
  const std::size_t w = verdicts.worst.value_or(0);
  out.headline = processes[w].timeline;
  out.headline.name = files.front().name + ": " + process_name(processes[w].who, files.size() > 1);
  out.diagnosis = verdicts.processes[w].diagnosis;
  out.diagnosis.summary = std::string(verdict_name(verdicts.verdict)) + ": " + verdicts.summary + ".";
  if (!verdicts.accumulating.empty()) {  // each process flat, the job growing by processes
    out.diagnosis.verdict = Verdict::Leak;
    out.diagnosis.rule = "processes accumulate";
    out.diagnosis.reasons.insert(out.diagnosis.reasons.begin(), verdicts.accumulating);
    out.diagnosis.remedies = {"Stop each helper when its work is done (process.terminate() / join(), a context manager, or "
                              "multiprocessing's Pool closed), or reuse one helper instead of starting one per epoch.",
                              "A helper that needs no GPU should not touch CUDA: set CUDA_VISIBLE_DEVICES=\"\" in its environment, so it "
                              "holds no context."};
  }
  out.processes = std::move(verdicts);
  return out;
}

}  // namespace vramdoc::timeline
