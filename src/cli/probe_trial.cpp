#include "cli/probe_trial.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/timeline_io.hpp"
#include "core/probe/growth.hpp"
#include "core/redact.hpp"
#include "core/timeline/classify.hpp"

namespace vramdoc::cli {

namespace {

std::atomic<bool> g_interrupted{false};

using Clock = std::chrono::steady_clock;

// Counts the step lines in the part of the log not read yet; `offset` advances.
long count_new_steps(const std::string& log_path, std::streamoff& offset, const std::regex& step, std::string& partial) {
  std::ifstream in(log_path, std::ios::binary);
  if (!in) return 0;
  in.seekg(offset);
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset += static_cast<std::streamoff>(chunk.size());
  partial += chunk;
  long found = 0;
  std::size_t start = 0, nl = 0;
  while ((nl = partial.find('\n', start)) != std::string::npos) {
    if (std::regex_search(partial.begin() + static_cast<long>(start), partial.begin() + static_cast<long>(nl), step)) ++found;
    start = nl + 1;
  }
  partial.erase(0, start);
  return found;
}

// The job's last non-empty output line: what `vramdoc run` appends after the job (its diagnosis,
// starting with "vramdoc run: the job exited") is not the job's.
std::string last_job_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.rfind("vramdoc run: the job exited", 0) == 0) break;
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.substr(0, 300);
}

// Stops the trial's process group: SIGTERM, then SIGKILL after a grace period.
int stop_group(pid_t pid) {
  ::kill(-pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return status;
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
  std::string base = s.work_dir + "/trial-" + std::to_string(value);
  std::string timeline_path = base + ".jsonl", log_path = base + ".log";
  std::vector<std::string> argv = {s.self_exe, "run", "--interval", s.interval, "--out", timeline_path};
  if (!s.step_regex.empty()) argv.insert(argv.end(), {"--step-regex", s.step_regex});
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", command});

  auto started = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    trial.outcome = probe::Outcome::Failed;
    trial.detail = "could not start the trial (fork failed)";
    return trial;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so the whole job can be stopped
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);  // the job's output: private
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);

  std::regex step_re(s.step_regex.empty() ? "$^" : s.step_regex, std::regex::icase);
  std::streamoff offset = 0;
  std::string partial;
  long steps_seen = 0;
  bool stopped_by_us = false;
  int status = 0;
  while (true) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (s.steps > 0) steps_seen += count_new_steps(log_path, offset, step_re, partial);
    double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    bool enough_steps = s.steps > 0 && steps_seen >= s.steps;
    bool out_of_time = s.trial_seconds > 0 && elapsed >= s.trial_seconds;
    if (enough_steps || out_of_time || g_interrupted) {
      stopped_by_us = !g_interrupted;
      status = stop_group(pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  trial.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  trial.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  auto timeline = load_timeline(timeline_path);
  bool oom = false;
  if (timeline) {
    for (const auto& sample : timeline->samples)
      trial.peak_bytes = std::max(trial.peak_bytes.value_or(0), sample.process_used_bytes);
    if (timeline->samples.empty()) trial.peak_bytes.reset();
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
  } else if (trial.exit_code == 0 || stopped_by_us) {
    trial.outcome = probe::Outcome::Ok;
  } else {
    trial.outcome = probe::Outcome::Failed;
    trial.detail = redact_text(last_job_line(log_path));  // the report is shared: no secrets from the job's output
  }
  return trial;
}

}  // namespace vramdoc::cli
