// Running a job for `vramdoc run`: started (backends/launcher) in its own process group with its
// output piped to us, that output passed through unchanged while each line goes to a scanner,
// signals forwarded, its exit status reported the way a shell does.
#pragma once
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/launcher.hpp"

namespace vramdoc::backends {

class Job {
 public:
  // Starts argv[0] (searched in PATH) with `extra_env` added to ours, in a new process group;
  // when our stdin is the terminal's foreground, the job gets the terminal (so Ctrl-C reaches it
  // directly). Null on failure, with `error_number` set (ENOENT: no such command).
  static std::unique_ptr<Job> start(const std::vector<std::string>& argv,
                                    const std::vector<std::pair<std::string, std::string>>& extra_env,
                                    int& error_number);

  pid_t pid() const { return process_->pid(); }
  // Copies the job's stdout and stderr to ours as the bytes come, and calls `on_line` with each
  // complete line ("\n" or "\r" ended, without it; a line longer than 64 KiB cut to that, once:
  // core/line_match.hpp) of either stream. Returns when both close, or a second after the job
  // ended while a background process of it still holds them: then a relay process passes the
  // rest of its output on until that process closes them too (Process::relay_output).
  // Also returns, true, when SIGTERM asked vramdoc to go (detach_requested): the job goes on,
  // its output passed on by a relay the same way.
  bool pump_output(const std::function<void(const std::string&)>& on_line);
  // Waits for the job to end: its exit code, or 128 + the signal that killed it.
  int wait() { return process_->wait(); }
  // Sends `sig` to the job's process group.
  void signal(int sig) const { process_->signal(sig); }

 private:
  explicit Job(std::unique_ptr<Process> process) : process_(std::move(process)) {}
  std::unique_ptr<Process> process_;
};

// While alive, SIGINT, SIGHUP and SIGQUIT sent to vramdoc go to the job's process group instead
// (vramdoc itself stays to record the end). SIGTERM does not: it asks vramdoc to stop recording
// and go, leaving the job running (detach_requested; docs/security.md). A signal vramdoc was
// started ignoring stays ignored. The previous handlers come back after.
class SignalForwarder {
 public:
  // Made before the job starts (a SIGTERM in between must not kill vramdoc and break the job's
  // pipes); `forward_sigterm`: SIGTERM is forwarded too (`run --sigterm forward`; probe's trials).
  explicit SignalForwarder(bool forward_sigterm);
  // The job's group, once started: a signal that came before is passed on now.
  void forward_to(pid_t job_group);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;
};

// SIGTERM came while a SignalForwarder was alive.
bool detach_requested();

// The job's processes: the root, its descendants, and any process still in its process group
// (workers that were re-parented). Read from procfs; `proc_root` is for tests.
std::vector<pid_t> job_processes(pid_t root, const std::string& proc_root = "/proc");

}  // namespace vramdoc::backends
