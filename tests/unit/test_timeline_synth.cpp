#include "test_timeline_synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vramdoc::test {

using timeline::Timeline;

namespace {

constexpr double MiB = 1048576.0, GiB = 1073741824.0;

std::string pytorch_oom(double requested, double capacity, double free, double in_use, double allocated, double unallocated) {
  char buf[600];
  std::snprintf(buf, sizeof buf,
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total capacity of %.2f GiB "
                "of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated "
                "memory %.2f GiB is allocated by PyTorch, and %.2f GiB is reserved by PyTorch but unallocated.",
                requested / GiB, capacity / GiB, free / GiB, in_use / GiB, allocated / GiB, unallocated / GiB);
  return buf;
}

}  // namespace

Timeline synthesize(const SynthParams& p) {
  std::mt19937 rng(p.seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, p.noise_mib * MiB);
  Timeline tl;
  tl.name = "synthetic";
  const double capacity = 80 * GiB;
  tl.total_bytes = static_cast<std::uint64_t>(capacity);
  const double context = 500 * MiB, weights = (0.5 + 2 * u(rng)) * GiB;
  const double activations = (2 + 10 * u(rng)) * GiB;  // one step's working set at full shape
  const double step_s = 0.05 + 0.25 * u(rng), load_s = 0.5 + 2 * u(rng), first_step_s = 0.5 + 1.0 * u(rng);
  const double segment = (256 + 1792 * u(rng)) * MiB;  // what the allocator adds when the cache runs out
  double reserved = context + weights, retained = weights, t = 0, next_sample = 0;
  double largest_shape = 0;
  auto sample_until = [&](double until, double level) {
    for (; next_sample <= until; next_sample += 0.02) {
      timeline::Sample s;
      s.t_seconds = next_sample;
      s.process_used_bytes = static_cast<std::uint64_t>(std::max(0.0, level + noise(rng)));
      s.device_used_bytes = s.process_used_bytes + static_cast<std::uint64_t>(600 * MiB);
      s.allocated_bytes = static_cast<std::uint64_t>(retained);
      tl.samples.push_back(s);
    }
  };
  sample_until(load_s, reserved);
  t = load_s;
  for (int k = 0; k < p.steps; ++k) {
    double shape = 1.0;  // this step's activations as a fraction of the full-shape working set
    if (p.kind == Kind::Plateau) shape = 0.1 + 0.9 * u(rng);
    if (p.kind == Kind::BatchRamp) shape = 0.5 * (k + 1);
    if (p.kind == Kind::Insufficient) shape = capacity / activations * 1.3;
    const double need = retained + shape * activations;  // live bytes at the step's peak
    // A new largest shape takes a new set of blocks, until the cache holds about three working sets
    // (the real recording levels off at 2.6): beyond that the allocator splits and reuses blocks.
    if (p.kind == Kind::Plateau && shape > largest_shape) {
      if (reserved < context + retained + 3 * shape * activations) reserved += shape * activations * (0.5 + 0.5 * u(rng));
      largest_shape = shape;
    }
    if (p.kind == Kind::BatchRamp) {  // each larger batch needs new blocks; near capacity the cache is given back
      if (reserved + shape * activations > capacity - context) reserved = context + need;
      else reserved += shape * activations;
    }
    while (need + context > reserved) reserved += segment;  // the cache ran out: one more segment
    double step_time = k == 0 ? first_step_s : step_s * (0.9 + 0.2 * u(rng));
    if (p.kind == Kind::BatchRamp) step_time *= 0.5 * (k + 1);
    if (reserved > capacity - context || (p.kind == Kind::Fragmentation && k == p.steps / 2)) {
      sample_until(t + step_time / 2, std::min(reserved, capacity));
      t += step_time / 2;
      const double free = std::max(0.0, capacity - std::min(reserved, capacity));
      const bool frag = p.kind == Kind::Fragmentation;
      const double requested = frag ? 2 * GiB : p.kind == Kind::LeakToOom ? free + p.leak_mib_per_step * MiB : free + 2 * GiB;
      tl.messages.push_back(pytorch_oom(requested, capacity, free, reserved, retained, frag ? 9 * GiB : 0.1 * GiB));
      tl.outcome = timeline::Outcome::Oom;
      tl.marks.push_back({t, "oom", static_cast<std::uint64_t>(retained), static_cast<std::uint64_t>(reserved), std::nullopt});
      return tl;
    }
    if (k == 0) {  // optimizer state appears at the first step's end
      sample_until(t + 0.8 * step_time, reserved);
      reserved += 2 * weights, retained += 2 * weights;
    }
    if (p.kind == Kind::Leak || p.kind == Kind::LeakToOom) retained += p.leak_mib_per_step * MiB;
    if (p.kind == Kind::Fragmentation) reserved += 0.5 * segment;
    sample_until(t + step_time, reserved);
    t += step_time;
    tl.marks.push_back({t, "step " + std::to_string(k), static_cast<std::uint64_t>(retained), static_cast<std::uint64_t>(reserved), std::nullopt});
  }
  tl.outcome = timeline::Outcome::Ok;
  return tl;
}

Timeline reduce(const Timeline& tl) {
  Timeline r = tl;
  r.marks.clear();
  for (auto& s : r.samples) s.device_used_bytes.reset(), s.allocated_bytes.reset(), s.reserved_bytes.reset();
  return r;
}

}  // namespace vramdoc::test
