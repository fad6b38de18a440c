#include "backends/launcher.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

extern char** environ;

namespace vramdoc::backends {

namespace {

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
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&defaults, s);
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
  while ((n = read(p->out_fd(), buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
  p->wait();
  return out;
}

}  // namespace vramdoc::backends
