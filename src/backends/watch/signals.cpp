#include "backends/watch/signals.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "backends/watch/proc_usage.hpp"

namespace vramdoc::backends {

namespace {

int signal_number(watch::ProcessSignal signal) {
  switch (signal) {
    case watch::ProcessSignal::Terminate: return SIGTERM;
    case watch::ProcessSignal::Kill: return SIGKILL;
    case watch::ProcessSignal::Interrupt: return SIGINT;
  }
  return SIGTERM;
}

// The errno in words and by name, with what to do where there is something to do.
std::string explain(int error, std::uint32_t pid) {
  const std::string id = "PID " + std::to_string(pid);
  if (error == EPERM)
    return id + ": operation not permitted (EPERM): it belongs to another user; run vramdoc as that user or root";
  if (error == ESRCH) return id + ": no such process (ESRCH): it has ended";
  return id + ": " + std::strerror(error) + " (errno " + std::to_string(error) + ")";
}

int pidfd_open(std::uint32_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

int pidfd_send(int fd, int sig) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0));
#else
  (void)fd, (void)sig;
  errno = ENOSYS;
  return -1;
#endif
}

// Empty when the process now under `pid` started at `start_ticks`, else why not.
std::optional<std::string> check_identity(std::uint32_t pid, std::optional<std::uint64_t> start_ticks,
                                          const std::string& proc_root) {
  if (!start_ticks) return std::nullopt;
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return explain(ESRCH, pid);
  auto stat = parse_proc_stat(line);
  if (!stat) return "PID " + std::to_string(pid) + ": its /proc/PID/stat is unreadable; nothing sent";
  if (stat->start_ticks != *start_ticks)
    return "PID " + std::to_string(pid) + " is now another process (the one shown has ended); nothing sent";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> send_signal(std::uint32_t pid, std::optional<std::uint64_t> start_ticks,
                                       watch::ProcessSignal signal, const std::string& proc_root) {
  if (pid == 0 || pid > static_cast<std::uint32_t>(INT32_MAX)) return "PID " + std::to_string(pid) + ": not a process";
  const int fd = pidfd_open(pid);
  if (fd < 0 && errno != ENOSYS) return explain(errno, pid);
  if (auto wrong = check_identity(pid, start_ticks, proc_root)) {
    if (fd >= 0) close(fd);
    return wrong;
  }
  int rc = 0;
  if (fd >= 0) {
    rc = pidfd_send(fd, signal_number(signal));
    const int error = errno;
    close(fd);
    errno = error;
  } else {
    rc = kill(static_cast<pid_t>(pid), signal_number(signal));
  }
  if (rc != 0) return explain(errno, pid);
  return std::nullopt;
}

}  // namespace vramdoc::backends
