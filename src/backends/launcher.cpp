#include "backends/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

extern char** environ;

namespace vramdoc::backends {

namespace {

// The dispositions this process was started with, read before main() runs: what a handler
// installed later (run's forwarding) must not hide.
struct StartSignals {
  sigset_t ignored;
  StartSignals() {
    sigemptyset(&ignored);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      struct sigaction now {};
      if (sigaction(s, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) sigaddset(&ignored, s);
    }
  }
};
const StartSignals g_start_signals;

// Gives the terminal's foreground to `group`, ignoring SIGTTOU while doing it (as shells do).
void hand_terminal(pid_t group) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTTOU, &ignore, &old);
  tcsetpgrp(STDIN_FILENO, group);
  sigaction(SIGTTOU, &old, nullptr);
}

// Our environment with `extra` added ("KEY=VALUE" strings; `extra` overrides).
std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  std::set<std::string> overridden;
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v), overridden.insert(k);
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    if (!overridden.count(entry.substr(0, entry.find('=')))) out.push_back(entry);
  }
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The descriptors that become the child's standard streams, and our ends of its pipes. Every
// descriptor opened here is closed when this goes away (the child has its copies by then).
class StreamFds {
 public:
  int child[3] = {-1, -1, -1};  // what becomes the child's 0, 1, 2 (-1: inherited)
  int ours[3] = {-1, -1, -1};   // our read ends of the output pipes (taken over by Process)

  ~StreamFds() {
    for (int fd : opened_) close(fd);
    for (int fd : ours)
      if (fd >= 0) close(fd);
  }
  // Prepares stream `n` (0, 1, 2); false with errno set when a pipe or file cannot be opened.
  bool prepare(int n, const Stream& s) {
    if (s.kind == Stream::Kind::Inherit) return true;
    if (n == 0 || s.kind == Stream::Kind::Null) return keep(n, open("/dev/null", (n == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC));
    if (s.kind == Stream::Kind::Pipe) {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) return false;
      ours[n] = p[0];
      return keep(n, p[1]);
    }
    if (n == 2 && file_[1] == s.path) {
      child[2] = child[1];  // stdout and stderr into one file share its offset, as 2>&1 does
      return true;
    }
    file_[n] = s.path;
    // Output written for the user (probe's trial logs): private, never through a planted link.
    return keep(n, open(s.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  }
  // Hands the pipe's read end of stream `n` to the caller.
  int take(int n) { return std::exchange(ours[n], -1); }

 private:
  bool keep(int n, int fd) {
    if (fd < 0) return false;
    child[n] = fd;
    opened_.push_back(fd);
    return true;
  }
  std::vector<int> opened_;
  std::string file_[3];
};

}  // namespace

bool ignored_at_start(int sig) { return sigismember(&g_start_signals.ignored, sig) == 1; }

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::unique_ptr<Process> Process::start(const std::vector<std::string>& argv, const LaunchOptions& options,
                                        int& error_number) {
  error_number = 0;
  if (argv.empty()) return error_number = EINVAL, nullptr;
  StreamFds fds;
  const Stream* streams[3] = {&options.in, &options.out, &options.err};
  for (int n = 0; n < 3; ++n)
    if (!fds.prepare(n, *streams[n])) return error_number = errno, nullptr;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int n = 0; n < 3; ++n)
    if (fds.child[n] >= 0) posix_spawn_file_actions_adddup2(&actions, fds.child[n], n);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = 0;
  if (options.own_group) posix_spawnattr_setpgroup(&attr, 0), flags |= POSIX_SPAWN_SETPGROUP;
  if (options.default_signals) {
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
      if (!ignored_at_start(s)) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    flags |= POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  }
  posix_spawnattr_setflags(&attr, flags);
  std::vector<std::string> args = argv, env = environment_with(options.extra_env);
  auto arg_ptrs = pointers(args), env_ptrs = pointers(env);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, arg_ptrs[0], &actions, &attr, arg_ptrs.data(), env_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return error_number = rc, nullptr;
  std::unique_ptr<Process> p(new Process());
  p->pid_ = pid;
  p->own_group_ = options.own_group;
  p->out_fd_ = fds.take(1), p->err_fd_ = fds.take(2);
  if (options.own_group && options.take_terminal && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
    hand_terminal(pid);
    p->gave_terminal_ = true;
  }
  return p;
}

Process::~Process() {
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
  if (gave_terminal_) hand_terminal(getpgrp());
}

void Process::close_pipe(int fd) {
  if (fd < 0) return;
  if (fd == out_fd_) out_fd_ = -1;
  else if (fd == err_fd_) err_fd_ = -1;
  else return;
  close(fd);
}

namespace {

// Closes descriptors first..last (close_range(2), or one by one on kernels before 5.9). Async-signal-safe.
void close_from(int first, int last) {
  if (first > last) return;
  if (syscall(SYS_close_range, first, last, 0) == 0) return;
  rlimit limit {};
  const int top = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536 ? static_cast<int>(limit.rlim_cur) : 65536;
  for (int fd = first; fd <= std::min(last, top); ++fd) close(fd);
}

// Closes every descriptor from 3 up except `keep_a` and `keep_b` (-1: none). Async-signal-safe.
void close_all_but(int keep_a, int keep_b) {
  constexpr int kAll = 0x7fffffff;
  const int lo = std::min(keep_a, keep_b) < 0 ? std::max(keep_a, keep_b) : std::min(keep_a, keep_b);
  const int hi = std::max(keep_a, keep_b);
  if (lo < 0) return close_from(3, kAll);
  close_from(3, lo - 1);
  close_from(lo + 1, hi - 1);
  close_from(hi + 1, kAll);
}

// The relay's whole life: copies each pipe to its target until every writer closed it (or the
// target broke: then that pipe is closed, and its writer sees what it would without vramdoc).
// Only system calls: it runs in the child of a fork from a process with threads.
[[noreturn]] void relay(int out_fd, int err_fd) {
  struct sigaction ignore {}, defaults {};
  ignore.sa_handler = SIG_IGN;
  defaults.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &ignore, nullptr);
  // Not run's handlers. A SIGTERM or SIGHUP meant for vramdoc (its process group's) must not end
  // the relay: the job writing on would die of SIGPIPE. Ctrl-C still ends it.
  for (int sig : {SIGTERM, SIGHUP}) sigaction(sig, &ignore, nullptr);
  for (int sig : {SIGINT, SIGQUIT}) sigaction(sig, ignored_at_start(sig) ? &ignore : &defaults, nullptr);
  close_all_but(out_fd, err_fd);
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  const int targets[2] = {STDOUT_FILENO, STDERR_FILENO};
  char buf[16384];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      bool done = n <= 0;
      for (ssize_t sent = 0; !done && sent < n;) {
        const ssize_t w = ::write(targets[i], buf + sent, static_cast<std::size_t>(n - sent));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) done = true;
        else sent += w;
      }
      if (done) close(fds[i].fd), fds[i].fd = -1;
    }
  }
  _exit(0);
}

}  // namespace

void Process::relay_output() {
  if (out_fd_ < 0 && err_fd_ < 0) return;
  if (fork() == 0) relay(out_fd_, err_fd_);  // failed to fork: the pipes close as before
  close_pipe(out_fd_);
  close_pipe(err_fd_);
}

void Process::reap(bool block) {
  if (status_) return;
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid_, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == 0) return;  // still running
  if (gave_terminal_) hand_terminal(getpgrp()), gave_terminal_ = false;
  status_ = r == pid_ ? shell_status(status) : 1;
}

std::optional<int> Process::poll() {
  reap(false);
  return status_;
}

int Process::wait() {
  reap(true);
  return *status_;
}

void Process::signal(int sig) const {
  // A group outlives its leader while a member is left (a background process of the job).
  if (own_group_) kill(-pid_, sig);
  else if (!status_) kill(pid_, sig);
}

int Process::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  const auto until = std::chrono::steady_clock::now() + grace;
  while (!poll() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!status_) signal(SIGKILL);
  return wait();
}

std::string start_failure(const std::string& program, int error_number) {
  struct stat st {};
  const bool here = ::stat(program.c_str(), &st) == 0;
  const bool has_slash = program.find('/') != std::string::npos;
  const bool script = program.ends_with(".py") || program.ends_with(".sh");
  if (error_number == ENOENT && !has_slash && here)
    return "no command '" + program + "' in PATH; the file " + program + " here is run as ./" + program +
           (script ? " (executable), or " + std::string(program.ends_with(".py") ? "python3 " : "sh ") + program : "");
  if (error_number == ENOENT) return "no such command (not in PATH, no such file)";
  if (error_number == EACCES && here && S_ISDIR(st.st_mode)) return program + " is a directory, not a program";
  if (error_number == EACCES && here)
    return program + " is not executable (chmod +x " + program +
           (script ? ", or run it as " + std::string(program.ends_with(".py") ? "python3 " : "sh ") + program : "") + ")";
  if (error_number == ENOEXEC) return program + " is not a program this system can run (no #! line?)";
  return std::strerror(error_number);
}

Result<std::string> capture_output(const std::vector<std::string>& argv) {
  LaunchOptions options;
  options.in = Stream::null();
  options.out = Stream::pipe();
  options.err = Stream::null();
  int error_number = 0;
  auto p = Process::start(argv, options, error_number);
  if (!p) return make_error("cannot run " + (argv.empty() ? std::string("nothing") : argv[0]) + ": " + std::strerror(error_number));
  std::string out;
  char buffer[65536];
  ssize_t n;
  while ((n = read(p->out_fd(), buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > kMaxCapturedBytes) {  // a program that never stops talking is stopped
      p->signal(SIGKILL);
      p->wait();
      return make_error(argv[0] + " wrote more than " + std::to_string(kMaxCapturedBytes >> 20) + " MiB: stopped");
    }
  }
  p->wait();
  return out;
}

}  // namespace vramdoc::backends
