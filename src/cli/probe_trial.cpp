#include "cli/probe_trial.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "backends/launcher.hpp"
#include "backends/watched_file.hpp"
#include "cli/timeline_io.hpp"
#include "core/line_match.hpp"
#include "core/probe/growth.hpp"
#include "core/redact.hpp"
#include "core/timeline/classify.hpp"

namespace vramdoc::cli {

namespace {

std::atomic<bool> g_interrupted{false};

using Clock = std::chrono::steady_clock;
constexpr auto kStopGrace = std::chrono::seconds(5);  // from SIGTERM to SIGKILL

// At most this much of the log is read per look (every 50 ms): a job writing faster is read later.
constexpr std::size_t kMaxLogReadBytes = 1 << 20;

// Counts the step lines in the part of the log not read yet (at most kMaxLogReadBytes of it).
long count_new_steps(backends::WatchedFile& log, const LineMatcher& step, LineSplitter& lines) {
  long found = 0;
  lines.feed(log.read_more(kMaxLogReadBytes), [&](std::string_view line) { found += step.search(line) ? 1 : 0; });
  return found;
}

// The last non-empty line of a trial's log (in its last 64 KiB): the job's output (run was told --no-report).
std::string last_output_line(const backends::WatchedFile* log) {
  if (!log) return "";
  std::string last;
  LineSplitter lines;
  const auto keep = [&](std::string_view line) {
    if (line.find_first_not_of(" \t") != std::string_view::npos) last = line;
  };
  lines.feed(log->tail(kMaxMatchedLineBytes), keep);
  lines.finish(keep);
  return last.substr(0, 300);
}

// Starts `vramdoc run` on the trial's command: its own process group (the whole job can be
// stopped), stdin from /dev/null, stdout and stderr into the log.
std::unique_ptr<backends::Process> start_trial(const TrialSettings& s, const std::string& command,
                                               const std::string& timeline_path, const std::string& log_path,
                                               int& error_number) {
  std::vector<std::string> argv = {s.self_exe, "run", "--no-report", "--interval", s.interval, "--out", timeline_path};
  if (!s.step_regex.empty()) argv.insert(argv.end(), {"--step-regex", s.step_regex});
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", command});
  backends::LaunchOptions options;
  options.in = backends::Stream::null();
  options.out = options.err = backends::Stream::file(log_path);
  options.own_group = true;
  return backends::Process::start(argv, options, error_number);
}

// How the trial's process ended.
struct Ending {
  int status = 0;              // as a shell reports it
  bool stopped_by_us = false;  // enough steps, or the trial time ran out
};

// Waits for the trial, counting step lines in its log; stops it (SIGTERM, then SIGKILL after a
// grace period) once it has run enough steps or its time, or when the probe is interrupted.
Ending watch_trial(backends::Process& trial, const TrialSettings& s, backends::WatchedFile* log, Clock::time_point started) {
  auto step_re = LineMatcher::compile(s.step_regex.empty() ? "$^" : s.step_regex, "--step-regex");  // checked before
  LineSplitter lines;
  long steps_seen = 0;
  while (true) {
    if (auto status = trial.poll()) return {*status, false};
    if (s.steps > 0 && step_re && log) steps_seen += count_new_steps(*log, *step_re, lines);
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    const bool enough_steps = s.steps > 0 && steps_seen >= s.steps;
    const bool out_of_time = s.trial_seconds > 0 && elapsed >= s.trial_seconds;
    if (enough_steps || out_of_time || g_interrupted) {
      const bool ours = !g_interrupted;
      return {trial.stop(kStopGrace), ours};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// What the trial's timeline says: the outcome and exit status from the end record run wrote (the
// process's own status when there is none), the peak, and whether memory grew.
void judge_trial(probe::Trial& trial, const std::string& timeline_path, const backends::WatchedFile* log, const Ending& end) {
  trial.exit_code = end.status;
  auto timeline = load_timeline(timeline_path);
  bool oom = false;
  if (timeline) {
    if (timeline->outcome != timeline::Outcome::Unknown && timeline->exit_status) trial.exit_code = *timeline->exit_status;
    for (const auto& sample : timeline->samples)
      trial.peak_bytes = std::max(trial.peak_bytes.value_or(0), sample.process_used_bytes);
    oom = timeline->outcome == timeline::Outcome::Oom || !timeline->messages.empty();
    if (!timeline->messages.empty()) trial.detail = timeline->messages.front();
    // Marked steps: the short-trial test on the readings at step ends. Without marks (a trial run
    // by time), the timeline classifier's leak verdict.
    const auto growth = probe::step_growth(*timeline);
    if (growth.judged) {
      trial.memory_grew = growth.grew;
      trial.growth = growth.why;
    } else {
      trial.memory_grew = timeline::classify(*timeline).verdict == timeline::Verdict::Leak;
      trial.growth = trial.memory_grew ? "the timeline classifier's leak verdict" : growth.why;
    }
  }
  if (oom) {
    trial.outcome = probe::Outcome::Oom;
  } else if (trial.exit_code == 0 || end.stopped_by_us) {
    trial.outcome = probe::Outcome::Ok;
  } else {
    trial.outcome = probe::Outcome::Failed;
    trial.detail = redact_text(last_output_line(log));  // the report is shared: no secrets from the job's output
  }
}

}  // namespace

void interrupt_trials() { g_interrupted = true; }
bool trials_interrupted() { return g_interrupted; }

std::string substitute(const std::string& command_template, const std::string& name, std::uint64_t value) {
  std::string key = "{" + name + "}", out = command_template;
  for (std::size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1))
    out.replace(at, key.size(), std::to_string(value));
  return out;
}

probe::Trial run_trial(const TrialSettings& s, const std::string& command, std::uint64_t value) {
  probe::Trial trial;
  trial.value = value;
  const std::string base = s.work_dir + "/trial-" + std::to_string(value);
  const std::string timeline_path = base + ".jsonl", log_path = base + ".log";
  const auto started = Clock::now();
  int error_number = 0;
  auto process = start_trial(s, command, timeline_path, log_path, error_number);
  if (!process) {
    trial.outcome = probe::Outcome::Failed;
    trial.detail = "could not start the trial: " + std::string(std::strerror(error_number));
    return trial;
  }
  // Read through the descriptor opened now: the job cannot swap the log for a FIFO or /dev/zero.
  auto log = backends::WatchedFile::open(log_path);
  backends::WatchedFile* log_file = log ? log->get() : nullptr;
  const Ending end = watch_trial(*process, s, log_file, started);
  trial.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  judge_trial(trial, timeline_path, log_file, end);
  return trial;
}

}  // namespace vramdoc::cli
