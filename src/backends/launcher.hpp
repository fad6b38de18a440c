// Starting a process: the one place vramdoc does it (run's job, probe's trials, addr2line).
// The child's standard streams are inherited, piped to us, or sent to a file or /dev/null; it may
// lead its own process group (and take the terminal); it is stopped with a grace period; its exit
// status is reported the way a shell reports it.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::backends {

// Where one of the child's standard streams goes.
struct Stream {
  enum class Kind { Inherit, Pipe, File, Null };
  Kind kind = Kind::Inherit;
  std::string path;  // Kind::File: created or truncated; stdout and stderr may name the same file

  static Stream inherit() { return {}; }
  static Stream pipe() { return {Kind::Pipe, {}}; }
  static Stream file(std::string path) { return {Kind::File, std::move(path)}; }
  static Stream null() { return {Kind::Null, {}}; }
};

struct LaunchOptions {
  std::vector<std::pair<std::string, std::string>> extra_env;  // added to our environment, overriding
  Stream in, out, err;           // stdin: Inherit, or /dev/null for any other kind
  bool own_group = false;        // the child leads a new process group; signal() and stop() reach all of it
  bool take_terminal = false;    // with own_group: when our stdin is the terminal's foreground, the
                                 // child's group gets it until the child ends (Ctrl-C reaches it)
  // SIGPIPE at its default, none blocked; SIGINT, SIGTERM, SIGHUP and SIGQUIT at their defaults
  // unless we were started ignoring them (nohup, a script's `cmd &`): then the child ignores them
  // too, as it would without us in between.
  bool default_signals = false;
};

// Whether this process was started with `sig` (SIGINT, SIGTERM, SIGHUP or SIGQUIT) ignored:
// nohup, or a non-interactive shell's `cmd &`. Read before main(), so later handlers do not hide it.
bool ignored_at_start(int sig);

// Exit status as a shell reports it: the exit code, or 128 + N when signal N killed it.
int shell_status(int wait_status);

class Process {
 public:
  // Starts argv[0] (searched in PATH). Null on failure, with `error_number` set (ENOENT: no such
  // command, EACCES: not executable, or why a pipe or file could not be opened).
  static std::unique_ptr<Process> start(const std::vector<std::string>& argv, const LaunchOptions& options,
                                        int& error_number);
  // Closes our ends of the pipes and gives the terminal back; neither kills nor waits.
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Our read ends of Stream::Pipe outputs; -1 otherwise or once closed.
  int out_fd() const { return out_fd_; }
  int err_fd() const { return err_fd_; }
  // Closes one of our pipe ends (out_fd() or err_fd()); the child's next write to it fails.
  void close_pipe(int fd);
  // Hands our open pipe ends to a relay: a copy of this process (fork, no exec) that passes what
  // still comes through them on to our stdout and stderr until every writer has closed them,
  // then exits. A background process of the child that outlives us then never finds its output
  // broken (SIGPIPE), as it would not without us in between. Our ends are closed after.
  void relay_output();

  // The exit status once the child has ended (collecting it without blocking); empty while it runs.
  std::optional<int> poll();
  // Waits for the child to end; its exit status.
  int wait();
  // Sends `sig` to the child's group (own_group) or to the child.
  void signal(int sig) const;
  // SIGTERM, then SIGKILL when the child has not ended after `grace`; its exit status.
  int stop(std::chrono::milliseconds grace);

 private:
  Process() = default;
  // Collects the exit status into status_, blocking when `block`.
  void reap(bool block);
  pid_t pid_ = -1;
  std::optional<int> status_;
  int out_fd_ = -1, err_fd_ = -1;
  bool own_group_ = false, gave_terminal_ = false;
};

// Why `program` could not be started (`error_number` from Process::start), said so that it
// leads to the fix: a name not found in PATH that is a file here ("use ./train.py or python3
// train.py"), a file that is not executable, a directory; else the system's words.
std::string start_failure(const std::string& program, int error_number);

// The most capture_output reads of a program's output (addr2line's answers are kilobytes).
inline constexpr std::size_t kMaxCapturedBytes = 64 * 1024 * 1024;

// Runs argv (found in PATH) to its end, stdin and stderr on /dev/null, and returns what it wrote
// on stdout. The error is for a command that could not start, or that wrote more than
// kMaxCapturedBytes (it is killed then).
Result<std::string> capture_output(const std::vector<std::string>& argv);

}  // namespace vramdoc::backends
