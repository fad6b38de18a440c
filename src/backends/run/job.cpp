#include "backends/run/job.hpp"

#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "core/line_match.hpp"

namespace vramdoc::backends {

namespace {

// False when `fd` is gone for good (a reader closed it: EPIPE).
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= static_cast<std::size_t>(n);
  }
  return true;
}

// How long the job's output is still read here after its main process ended (then: relay_output).
constexpr auto kOutputAfterExit = std::chrono::seconds(1);

volatile sig_atomic_t g_job_group = 0;
volatile sig_atomic_t g_detach = 0;  // SIGTERM came: stop recording, leave the job running
volatile sig_atomic_t g_forward_sigterm = 0;
volatile sig_atomic_t g_pending = 0;  // a signal to forward that came before the job's group was known
const int kHandled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction g_previous[sizeof kHandled / sizeof kHandled[0]];
bool g_installed[sizeof kHandled / sizeof kHandled[0]];

void on_signal(int sig) {
  if (sig == SIGTERM && !g_forward_sigterm) g_detach = 1;
  else if (g_job_group > 0) kill(-static_cast<pid_t>(g_job_group), sig);
  else g_pending = sig;
}

}  // namespace

std::unique_ptr<Job> Job::start(const std::vector<std::string>& argv,
                                const std::vector<std::pair<std::string, std::string>>& extra_env, int& error_number) {
  LaunchOptions options;
  options.extra_env = extra_env;
  options.out = Stream::pipe();
  options.err = Stream::pipe();
  options.own_group = options.take_terminal = options.default_signals = true;
  auto process = Process::start(argv, options, error_number);
  if (!process) return nullptr;
  return std::unique_ptr<Job>(new Job(std::move(process)));
}

bool Job::pump_output(const std::function<void(const std::string&)>& on_line) {
  // Our stdout closed (`vramdoc run ... | head`): close the job's pipe too, so that its next write
  // fails as it would without vramdoc in between, instead of vramdoc dying of SIGPIPE.
  struct sigaction ignore {}, old_pipe {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  LineSplitter lines[2];  // a long line is scanned on its first 64 KiB (core/line_match.hpp)
  const LineSplitter::OnLine scan = [&](std::string_view line) { on_line(std::string(line)); };
  pollfd fds[2] = {{process_->out_fd(), POLLIN, 0}, {process_->err_fd(), POLLIN, 0}};
  const int targets[2] = {STDOUT_FILENO, STDERR_FILENO};
  char buf[65536];
  int open_fds = 2;
  std::optional<std::chrono::steady_clock::time_point> ended;  // when the job's main process ended
  bool detached = false;
  while (open_fds > 0) {
    // SIGTERM: vramdoc goes, the job stays; a relay passes its output on from now (poll wakes on
    // the signal, or within 100 ms).
    if (detach_requested()) {
      process_->relay_output();
      detached = true;
      break;
    }
    // The job has ended but something it started in the background still holds the pipes: its
    // output gets a second here, then a relay passes the rest on (the job is not cut off).
    if (!ended && process_->poll()) ended = std::chrono::steady_clock::now();
    if (ended && std::chrono::steady_clock::now() - *ended >= kOutputAfterExit) {
      process_->relay_output();
      break;
    }
    const int ready = poll(fds, 2, 100);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        lines[i].finish(scan);
        process_->close_pipe(fds[i].fd);  // every writer is gone: nothing to relay
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      if (!write_all(targets[i], buf, static_cast<std::size_t>(n))) {
        process_->close_pipe(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      lines[i].feed(std::string_view(buf, static_cast<std::size_t>(n)), scan);
    }
  }
  for (auto& l : lines) l.finish(scan);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  return detached;
}

SignalForwarder::SignalForwarder(bool forward_sigterm) {
  g_job_group = 0;
  g_detach = 0;
  g_pending = 0;
  g_forward_sigterm = forward_sigterm;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < sizeof kHandled / sizeof kHandled[0]; ++i) {
    // Ignored when vramdoc started (nohup, `cmd &` in a script): ignored still, and not passed on.
    g_installed[i] = !ignored_at_start(kHandled[i]) && sigaction(kHandled[i], &sa, &g_previous[i]) == 0;
  }
}

SignalForwarder::~SignalForwarder() {
  for (std::size_t i = 0; i < sizeof kHandled / sizeof kHandled[0]; ++i)
    if (g_installed[i]) sigaction(kHandled[i], &g_previous[i], nullptr);
  g_job_group = 0;
}

void SignalForwarder::forward_to(pid_t job_group) {
  g_job_group = job_group;
  if (const int sig = g_pending) g_pending = 0, kill(-job_group, sig);
}

bool detach_requested() { return g_detach != 0; }

std::vector<pid_t> job_processes(pid_t root, const std::string& proc_root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::set<pid_t> in_group;
  if (DIR* dir = opendir(proc_root.c_str())) {
    while (dirent* e = readdir(dir)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end) continue;
      std::ifstream in(proc_root + "/" + e->d_name + "/stat");
      std::string stat;
      std::getline(in, stat);
      // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses; cut at the last ')'.
      const auto close_paren = stat.rfind(')');
      if (close_paren == std::string::npos) continue;
      char state = 0;
      long ppid = 0, pgrp = 0;
      if (std::sscanf(stat.c_str() + close_paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
      children[static_cast<pid_t>(ppid)].push_back(static_cast<pid_t>(pid));
      if (pgrp == root) in_group.insert(static_cast<pid_t>(pid));
    }
    closedir(dir);
  }
  std::set<pid_t> seen{root};
  std::vector<pid_t> todo{root};
  for (pid_t g : in_group) if (seen.insert(g).second) todo.push_back(g);
  std::vector<pid_t> out;
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    out.push_back(p);
    for (pid_t c : children[p]) if (seen.insert(c).second) todo.push_back(c);
  }
  return out;
}

}  // namespace vramdoc::backends
