// `vramdoc run`'s recorder: a thread that samples the job's GPU memory every interval (its whole
// process tree, per process and GPU), reads step marks the job (or vramdoc's step hook) writes
// to the marker file, and collects the marks and OOM messages found in its output; each event
// becomes a line of our timeline format at once (version 2, docs/timeline-format.md).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "backends/run/job_memory.hpp"
#include "backends/watched_file.hpp"
#include "core/timeline/ticks.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::backends {

// The most of the marks file read per sampling interval (a job writing faster is read later; one
// filling it without end, or replacing it with a link to /dev/zero, cannot hold the recorder).
inline constexpr std::size_t kMaxMarkBytesPerTick = 256 * 1024;

class TimelineRecorder {
 public:
  using Sink = std::function<void(const std::string& line)>;
  // `probe` may be null (no driver): then only marks and messages are recorded. `mark_file` is
  // read for new marker lines each interval, through its descriptor and at most
  // kMaxMarkBytesPerTick of it at a time; null for none. `host` names this machine in the
  // series. `sink` gets each line. Unchanged samples are written every `heartbeat_seconds`.
  TimelineRecorder(JobMemoryProbe* probe, double interval_seconds, WatchedFile* mark_file, std::string host, Sink sink,
              double heartbeat_seconds = 1.0);
  ~TimelineRecorder();
  TimelineRecorder(const TimelineRecorder&) = delete;
  TimelineRecorder& operator=(const TimelineRecorder&) = delete;

  // Starts sampling the process tree rooted at `root` (and its process group).
  void start(pid_t root);
  // Adds a mark now (thread-safe), e.g. "step 12" from the job's output.
  void mark(const std::string& label);
  // Records an out-of-memory message seen in the job's output (the first few are kept).
  void oom_message(const std::string& text);
  // Takes a last sample, writes the last unchanged one, and stops the thread.
  void stop();
  // Seconds since the recorder was made.
  double now() const;
  // The GPUs the job used, as seen so far.
  std::vector<unsigned> gpus() const;
  // Out-of-memory messages recorded so far.
  std::size_t oom_messages() const;

 private:
  void loop();
  void sample_once();
  std::size_t read_mark_file();  // the bytes read
  void add_mark(timeline::Mark m);

  JobMemoryProbe* probe_;
  double interval_;
  WatchedFile* mark_file_;
  std::string mark_pending_;
  std::string host_;
  Sink sink_;
  pid_t root_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  timeline::TickWriter ticks_;  // the sampler thread's (and stop()'s, after it ended)
  mutable std::mutex mutex_;    // guards gpus_, messages_ and sink_ calls
  std::vector<unsigned> gpus_;
  std::size_t messages_ = 0;
};

}  // namespace vramdoc::backends
