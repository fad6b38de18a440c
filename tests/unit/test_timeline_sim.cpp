#include "test_timeline_sim.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace vramdoc::test {

using timeline::Timeline;

namespace {

constexpr double GiB = 1073741824.0;

std::string oom_message(double requested, double capacity, double in_use, double allocated) {
  char buf[600];
  std::snprintf(buf, sizeof buf,
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total capacity of %.2f GiB of which "
                "%.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB "
                "is allocated by PyTorch, and 0.05 GiB is reserved by PyTorch but unallocated.",
                requested / GiB, capacity / GiB, std::max(0.0, capacity - in_use) / GiB, in_use / GiB, allocated / GiB);
  return buf;
}

// The recording in progress: the sampler's clock and the driver's number over time.
struct Recorder {
  const SimJob& job;
  const SimRecording& rec;
  Timeline tl;
  std::mt19937 rng;
  std::normal_distribution<double> noise;
  double next_sample = 0, level = 0, allocated = 0;

  Recorder(const SimJob& j, const SimRecording& r) : job(j), rec(r), rng(r.seed), noise(0, r.noise_bytes) {
    next_sample = std::uniform_real_distribution<double>(0, r.interval)(rng);
  }
  void until(double t) {  // samples of the current level up to time t
    for (; next_sample <= t; next_sample += rec.interval * (0.9 + 0.2 * std::uniform_real_distribution<double>(0, 1)(rng))) {
      timeline::Sample s;
      s.t_seconds = std::round(next_sample * 1e4) / 1e4;
      s.process_used_bytes = level > 0 ? static_cast<std::uint64_t>(std::max(0.0, level + noise(rng))) : 0;
      tl.samples.push_back(s);
    }
  }
};

}  // namespace

Timeline record(const SimJob& job, const SimRecording& rec) {
  Recorder r(job, rec);
  r.tl.name = "sim";
  r.tl.total_bytes = static_cast<std::uint64_t>(job.capacity_bytes);
  r.tl.command = job.command;
  std::normal_distribution<double> jitter(1, rec.step_jitter);
  r.until(0.3);  // before the CUDA context: nothing held
  double pool = job.pool_bytes.value_or(job.load_bytes);
  auto grow = [&](double live) { pool = std::max(pool, std::ceil(live / job.segment_bytes) * job.segment_bytes); };
  r.level = job.context_bytes + pool;
  double t = 0.3 + job.load_seconds, live = job.load_bytes;
  for (std::size_t k = 0; k < job.steps.size(); ++k) {
    const auto& step = job.steps[k];
    const double seconds = step.seconds * std::max(0.3, jitter(r.rng));
    r.until(t + 0.6 * seconds);  // forward: the step's activations appear
    if (!job.pool_bytes || step.peak_bytes > pool) grow(step.peak_bytes);
    if (job.context_bytes + pool > job.capacity_bytes) {
      const double in_use = job.context_bytes + std::min(pool, job.capacity_bytes - job.context_bytes);
      r.level = in_use;
      r.until(t + 0.7 * seconds);
      // A step allocates tensor by tensor: the failed request is one of them, not the whole step.
      r.tl.messages.push_back(oom_message(std::min(step.peak_bytes - live, 2 * GiB), job.capacity_bytes, in_use, in_use - job.context_bytes));
      r.tl.marks.push_back({t + 0.7 * seconds, "oom", {}, {}, {}});
      r.tl.outcome = timeline::Outcome::Oom;
      return r.tl;
    }
    r.level = job.context_bytes + pool;
    r.until(t + seconds);
    t += seconds;
    live = step.end_bytes;
    if (rec.marks) r.tl.marks.push_back({t, "step " + std::to_string(k), static_cast<std::uint64_t>(live), static_cast<std::uint64_t>(pool), {}});
  }
  r.until(t + 0.2);
  r.level = 0;  // the process exited: the driver charges it nothing
  r.until(t + 0.3);
  r.tl.outcome = timeline::Outcome::Ok;
  return r.tl;
}

SimJob periodic_eval_leak(int steps, int every, double act, double kept, double step_seconds) {
  SimJob job;
  double retained = job.load_bytes;
  for (int k = 0; k < steps; ++k) {
    SimStep s{step_seconds, retained + act, retained};
    if (k % every == every - 1) retained += kept, s.end_bytes = retained, s.seconds *= 1.3;
    job.steps.push_back(s);
  }
  return job;
}

SimJob random_shapes(int steps, double act, double step_seconds, unsigned job_seed) {
  SimJob job;
  std::mt19937 rng(job_seed);
  std::uniform_real_distribution<double> share(0.1, 1.0);
  for (int k = 0; k < steps; ++k) job.steps.push_back({step_seconds, job.load_bytes + act * share(rng), job.load_bytes});
  return job;
}

SimJob eval_spike(int steps, int every, double act, double eval_act, double step_seconds) {
  SimJob job;
  for (int k = 0; k < steps; ++k) {
    const bool eval = k % every == every - 1;
    job.steps.push_back({eval ? 1.5 * step_seconds : step_seconds, job.load_bytes + (eval ? eval_act : act), job.load_bytes});
  }
  return job;
}

SimJob preallocated_leak(int steps, double leak, double pool_share, double step_seconds) {
  SimJob job;
  job.pool_bytes = pool_share * job.capacity_bytes;
  job.command = {"python3", "train.py"};
  double retained = job.load_bytes;
  for (int k = 0; k < steps; ++k) {
    retained += leak;
    job.steps.push_back({step_seconds, retained + 1 * GiB, retained});
  }
  return job;
}

}  // namespace vramdoc::test
