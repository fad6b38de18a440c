#include "backends/run/recorder.hpp"

#include <algorithm>

#include "backends/run/process_identity.hpp"
#include "backends/run/job.hpp"
#include "core/timeline/marker.hpp"
#include "core/timeline/writer.hpp"

namespace vramdoc::backends {

TimelineRecorder::TimelineRecorder(JobMemoryProbe* probe, double interval_seconds, WatchedFile* mark_file, std::string host, Sink sink,
                         double heartbeat_seconds)
    : probe_(probe), interval_(interval_seconds), mark_file_(mark_file), host_(std::move(host)),
      sink_(std::move(sink)), start_(std::chrono::steady_clock::now()), ticks_(heartbeat_seconds) {}

TimelineRecorder::~TimelineRecorder() { stop(); }

double TimelineRecorder::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void TimelineRecorder::start(pid_t root) {
  root_ = root;
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void TimelineRecorder::loop() {
  auto next = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_));
  while (running_) {
    sample_once();
    read_mark_file();
    next += period;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // fell behind (a slow query): skip, do not burst
    std::this_thread::sleep_until(next);
  }
}

void TimelineRecorder::sample_once() {
  if (!probe_ || root_ <= 0) return;
  const JobMemory m = probe_->read(job_processes(root_));
  if (!m.process_used_bytes) return;  // unknown this time: no sample rather than a false 0
  timeline::Tick tick;
  tick.t_seconds = now();
  tick.process_used_bytes = *m.process_used_bytes;
  tick.device_used_bytes = m.device_used_bytes;
  tick.processes = m.processes;
  tick.gpu_used_bytes = m.gpu_used_bytes;
  const std::string lines = ticks_.add(tick, [this](std::uint32_t pid, unsigned gpu) { return read_process_identity(pid, gpu, host_); });
  std::lock_guard lock(mutex_);
  for (unsigned g : m.gpus)
    if (std::find(gpus_.begin(), gpus_.end(), g) == gpus_.end()) gpus_.push_back(g);
  if (!lines.empty()) sink_(lines);
}

std::size_t TimelineRecorder::read_mark_file() {
  if (!mark_file_) return 0;
  const std::string bytes = mark_file_->read_more(kMaxMarkBytesPerTick);
  for (const char c : bytes) {
    if (c == '\n') {
      if (auto m = timeline::parse_marker_line(mark_pending_)) add_mark(std::move(*m));
      mark_pending_.clear();
    } else if (mark_pending_.size() < 400 && c != '\r') {
      mark_pending_ += c;
    }
  }
  return bytes.size();
}

void TimelineRecorder::mark(const std::string& label) { add_mark({0, label.substr(0, 200), std::nullopt, std::nullopt, std::nullopt}); }

void TimelineRecorder::add_mark(timeline::Mark m) {
  m.t_seconds = now();
  std::lock_guard lock(mutex_);
  sink_(timeline::mark_line(m));
}

void TimelineRecorder::oom_message(const std::string& text) {
  const double t = now();
  std::lock_guard lock(mutex_);
  if (messages_ >= 5) return;
  ++messages_;
  sink_(timeline::oom_message_line(t, text));
  if (messages_ == 1) sink_(timeline::mark_line({t, "oom", std::nullopt, std::nullopt, std::nullopt}));
}

void TimelineRecorder::stop() {
  if (!running_.exchange(false)) return;
  if (thread_.joinable()) thread_.join();
  for (int i = 0; i < 64 && read_mark_file() > 0; ++i) {}  // what the job wrote last, a bounded amount of it
  if (!mark_pending_.empty()) {
    if (auto m = timeline::parse_marker_line(mark_pending_)) add_mark(std::move(*m));
    mark_pending_.clear();
  }
  const std::string last = ticks_.finish();
  std::lock_guard lock(mutex_);
  if (!last.empty()) sink_(last);
}

std::vector<unsigned> TimelineRecorder::gpus() const {
  std::lock_guard lock(mutex_);
  return gpus_;
}

std::size_t TimelineRecorder::oom_messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

}  // namespace vramdoc::backends
