#include "backends/process_sampler.hpp"

#include <algorithm>
#include <cstdio>

#include "backends/process_job.hpp"
#include "core/timeline/writer.hpp"

namespace vramdoc::backends {

JobRecorder::JobRecorder(JobMemoryProbe* probe, double interval_seconds, std::string mark_file, Sink sink)
    : probe_(probe), interval_(interval_seconds), mark_file_(std::move(mark_file)), sink_(std::move(sink)),
      start_(std::chrono::steady_clock::now()) {}

JobRecorder::~JobRecorder() { stop(); }

double JobRecorder::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void JobRecorder::start(pid_t root) {
  root_ = root;
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void JobRecorder::loop() {
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

void JobRecorder::sample_once() {
  if (!probe_ || root_ <= 0) return;
  const JobMemory m = probe_->read(job_processes(root_));
  timeline::Sample s;
  s.t_seconds = now();
  if (!m.process_used_bytes) return;  // unknown this time: no sample rather than a false 0
  s.process_used_bytes = *m.process_used_bytes;
  s.device_used_bytes = m.device_used_bytes;
  std::lock_guard lock(mutex_);
  for (unsigned g : m.gpus)
    if (std::find(gpus_.begin(), gpus_.end(), g) == gpus_.end()) gpus_.push_back(g);
  tl_.samples.push_back(s);
  sink_(timeline::sample_line(s));
}

void JobRecorder::read_mark_file() {
  if (mark_file_.empty()) return;
  FILE* f = std::fopen(mark_file_.c_str(), "rb");
  if (!f) return;
  if (std::fseek(f, mark_offset_, SEEK_SET) == 0) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
      mark_offset_ += static_cast<long>(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (buf[i] == '\n') {
          if (!mark_pending_.empty()) mark(mark_pending_);
          mark_pending_.clear();
        } else if (mark_pending_.size() < 200 && buf[i] != '\r') {
          mark_pending_ += buf[i];
        }
      }
    }
  }
  std::fclose(f);
}

void JobRecorder::mark(const std::string& label) {
  timeline::Mark m;
  m.t_seconds = now();
  m.label = label.substr(0, 200);
  std::lock_guard lock(mutex_);
  tl_.marks.push_back(m);
  sink_(timeline::mark_line(m));
}

void JobRecorder::oom_message(const std::string& text) {
  const double t = now();
  std::lock_guard lock(mutex_);
  if (tl_.messages.size() >= 5) return;
  tl_.messages.push_back(text);
  sink_(timeline::oom_message_line(t, text));
  if (tl_.messages.size() == 1) {
    timeline::Mark m{t, "oom", std::nullopt, std::nullopt};
    tl_.marks.push_back(m);
    sink_(timeline::mark_line(m));
  }
}

void JobRecorder::stop() {
  if (!running_.exchange(false)) return;
  if (thread_.joinable()) thread_.join();
  read_mark_file();
  if (!mark_pending_.empty()) mark(mark_pending_), mark_pending_.clear();
}

std::vector<unsigned> JobRecorder::gpus() const {
  std::lock_guard lock(mutex_);
  return gpus_;
}

}  // namespace vramdoc::backends
