#include "backends/probe/trials.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "backends/launcher.hpp"
#include "backends/private_files.hpp"
#include "backends/watched_file.hpp"
#include "core/line_match.hpp"
#include "core/probe/judge.hpp"
#include "core/probe/report.hpp"
#include "core/redact.hpp"
#include "core/timeline/reader.hpp"

namespace vramdoc::backends {

namespace {

std::atomic<bool> g_interrupted{false};

void on_signal(int) { g_interrupted = true; }

using Clock = std::chrono::steady_clock;
constexpr auto kStopGrace = std::chrono::seconds(5);  // from SIGTERM to SIGKILL

// At most this much of the log is read per look (every 50 ms): a job writing faster is read later.
constexpr std::size_t kMaxLogReadBytes = 1 << 20;

// Counts the step lines in the part of the log not read yet (at most kMaxLogReadBytes of it).
long count_new_steps(WatchedFile& log, const timeline::StepRegex& step, LineSplitter& lines) {
  long found = 0;
  lines.feed(log.read_more(kMaxLogReadBytes), [&](std::string_view line) { found += step.matches(line) ? 1 : 0; });
  return found;
}

// The last non-empty line of a trial's log (in its last 64 KiB): the job's output (run was told --no-report).
std::string last_output_line(const WatchedFile* log) {
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
std::unique_ptr<Process> start_trial(const TrialSettings& s, const std::string& command, const std::string& timeline_path,
                                     const std::string& log_path, int& error_number) {
  // --sigterm forward: stopping a trial (Process::stop) stops its job, not only the recorder.
  std::vector<std::string> argv = {s.self_exe, "run", "--no-report", "--sigterm", "forward", "--interval", s.interval, "--out", timeline_path};
  if (!s.step_regex.empty()) argv.insert(argv.end(), {"--step-regex", s.step_regex});
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", command});
  LaunchOptions options;
  options.extra_env = gpu_memory_environment(s);
  options.in = Stream::null();
  options.out = options.err = Stream::file(log_path);
  options.own_group = true;
  return Process::start(argv, options, error_number);
}

// How often a running trial's timeline is read to see whether its memory has settled.
constexpr double kSettleLookSeconds = 0.25;

// The trial's memory by the timeline `run` has written so far (a last line cut short is skipped
// by the reader); nothing when it cannot be read yet.
std::optional<probe::Settling> settling_so_far(const std::string& timeline_path, const probe::SettleRule& rule) {
  auto tl = timeline::read_timeline_file(timeline_path);
  if (!tl) return std::nullopt;
  return probe::settling(*tl, rule);
}

// Waits for the trial, counting step lines in its log and reading its timeline (the step hook's
// optimizer steps count too); stops it (SIGTERM, then SIGKILL after a grace period) once its
// memory has settled after at least `steps` steps, at `max_steps`, at its time, or when the probe
// is interrupted.
probe::TrialEnd watch_trial(Process& trial, const TrialSettings& s, const std::optional<timeline::StepRegex>& step_re,
                            WatchedFile* log, const std::string& timeline_path, Clock::time_point started) {
  LineSplitter lines;
  long steps_seen = 0;
  double looked = 0;
  bool settled = false;
  while (true) {
    if (auto status = trial.poll()) return {*status, false, {}, steps_seen};
    if (step_re && log) steps_seen += count_new_steps(*log, *step_re, lines);
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    if (elapsed - looked >= kSettleLookSeconds) {
      looked = elapsed;
      if (auto now = settling_so_far(timeline_path, s.settle)) {
        steps_seen = std::max<long>(steps_seen, now->steps);
        settled = now->settled_at.has_value();
      }
    }
    const bool enough_steps = (s.max_steps > 0 && steps_seen >= s.max_steps) ||
                              (s.stop_when_settled && settled && steps_seen >= s.steps);
    const bool out_of_time = s.trial_seconds > 0 && elapsed >= s.trial_seconds;
    if (enough_steps || out_of_time || g_interrupted) {
      const bool ours = !g_interrupted;
      return {trial.stop(kStopGrace), ours, {}, steps_seen};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> gpu_memory_environment(const TrialSettings& s) {
  if (!s.gpu_memory_bytes) return {};
  std::vector<std::pair<std::string, std::string>> env = {{"VRAMDOC_GPU_MEMORY_BYTES", std::to_string(*s.gpu_memory_bytes)}};
  if (s.outside_allocator_bytes) env.emplace_back("VRAMDOC_GPU_OUTSIDE_BYTES", std::to_string(*s.outside_allocator_bytes));
  return env;
}

probe::Trial run_trial(const TrialSettings& s, const std::optional<timeline::StepRegex>& steps, const std::string& command,
                       std::uint64_t value) {
  probe::Trial trial;
  trial.value = value;
  const std::string base = s.work_dir + "/trial-" + std::to_string(value) + s.file_suffix;
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
  auto log = WatchedFile::open(log_path);
  WatchedFile* log_file = log ? log->get() : nullptr;
  probe::TrialEnd end = watch_trial(*process, s, steps, log_file, timeline_path, started);
  trial.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  end.last_line = redact_text(last_output_line(log_file));  // the report is shared: no secrets from the job's output
  probe::judge_trial(trial, timeline::read_timeline_file(timeline_path), end, s.settle);
  return trial;
}

bool run_search(probe::Search& search, const TrialSettings& settings, const std::optional<timeline::StepRegex>& steps,
                const std::string& command_template, const std::string& parameter, double budget_seconds,
                const std::function<void(const std::string&)>& progress) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const auto started = Clock::now();
  std::optional<std::uint64_t> outside;  // the largest context the trials measured: the next trial's cap leaves it room
  while (auto value = search.next()) {
    const double spent = std::chrono::duration<double>(Clock::now() - started).count();
    if (spent >= budget_seconds || g_interrupted) return true;
    const bool confirming = search.confirming();
    TrialSettings these = settings;
    if (outside) these.outside_allocator_bytes = outside;
    if (confirming || search.runs_long()) {  // the answer (or, near the bracket's end, maybe it): the confirmation's length, settled or not
      these.steps = these.max_steps = search.limits().confirm_steps;
      these.stop_when_settled = false;
      if (confirming) these.file_suffix = "-confirm";
    }
    progress((confirming ? "confirming " : "trying ") + parameter + " " + std::to_string(*value) +
             (these.stop_when_settled ? "" : " for " + std::to_string(these.max_steps) + " steps") + " ...");
    auto trial = run_trial(these, steps, probe::substitute(command_template, parameter, *value), *value);
    trial.confirmation = confirming;
    if (g_interrupted) return true;
    progress(probe::progress_line(parameter, trial));
    if (trial.outside_allocator_bytes) outside = std::max(outside.value_or(0), *trial.outside_allocator_bytes);
    search.record(trial);
  }
  return false;
}

Result<std::string> trial_folder(const std::string& keep, bool& temporary) {
  temporary = keep.empty();
  if (temporary) return make_private_temp_directory("vramdoc-probe");
  std::error_code ec;
  std::filesystem::create_directories(keep, ec);
  if (ec) return make_error("--keep " + keep + ": " + ec.message());
  return keep;
}

}  // namespace vramdoc::backends
