#include "backends/watch/sampler.hpp"

namespace vramdoc::backends {

WatchSampler::WatchSampler(std::shared_ptr<backends::Nvml> nvml, std::vector<unsigned> devices, double full_period_s)
    : nvml_(std::move(nvml)), devices_(std::move(devices)),
      full_period_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(full_period_s))) {}

GpuStatic WatchSampler::static_info(unsigned index) {
  auto found = statics_.find(index);
  if (found != statics_.end()) return found->second;
  auto info = nvml_->static_info(index);
  if (info.ok()) return statics_[index] = *info;
  GpuStatic unknown;  // not cached: identity is read again next time (the device may come back)
  unknown.index = index;
  return unknown;
}

Result<GpuSample> WatchSampler::quick_sample(unsigned index) {
  auto memory = nvml_->memory(index);
  if (!memory) return make_error(memory.error());
  auto found = full_.find(index);
  GpuSample out;
  if (found != full_.end()) out = found->second;  // slow fields carried from the last full sample
  out.index = index;
  out.memory = *memory;
  if (auto now = nvml_->processes(index)) {
    std::map<std::uint32_t, GpuProcess> before;
    for (const auto& p : out.processes) before[p.pid] = p;
    for (auto& p : *now) {
      auto old = before.find(p.pid);
      if (old == before.end()) continue;
      p.sm_util_percent = old->second.sm_util_percent;
      p.mem_util_percent = old->second.mem_util_percent;
    }
    out.processes = std::move(*now);
  }  // else: the list of the last full sample stands
  return out;
}

watch::Snapshot WatchSampler::sample() {
  watch::Snapshot snapshot;
  snapshot.t_unix_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto now = std::chrono::steady_clock::now();
  bool full = !last_full_ || now - *last_full_ >= full_period_;
  if (full) last_full_ = now;
  std::vector<Result<GpuSample>> samples;
  std::vector<std::uint32_t> pids;
  for (unsigned index : devices_) {
    if (full) {
      samples.push_back(nvml_->sample(index));
      if (samples.back().ok()) full_[index] = *samples.back();
      else full_.erase(index);
    } else {
      samples.push_back(quick_sample(index));
    }
    if (samples.back().ok())
      for (const auto& p : samples.back()->processes) pids.push_back(p.pid);
  }
  auto details = processes_.lookup(pids);
  if (full) usage_ = usage_tracker_.sample(pids, std::chrono::duration<double>(now.time_since_epoch()).count());
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    auto& s = samples[i];
    if (s.ok()) {
      snapshot.gpus.push_back(watch::make_gpu_view(static_info(devices_[i]), std::move(*s), std::nullopt, details, usage_));
    } else {
      snapshot.gpus.push_back(watch::make_gpu_view(static_info(devices_[i]), std::nullopt, s.error(), details));
    }
  }
  return snapshot;
}

Result<std::vector<unsigned>> watched_devices(backends::Nvml& nvml, std::optional<unsigned> device) {
  const unsigned count = nvml.device_count();
  if (!device) {
    std::vector<unsigned> all(count);
    for (unsigned i = 0; i < count; ++i) all[i] = i;
    return all;
  }
  if (*device >= count)
    return make_error("--device " + std::to_string(*device) + ": this machine has " + std::to_string(count) +
                      " GPU(s), numbered from 0");
  return std::vector<unsigned>{*device};
}

DriverRetryingSampler::DriverRetryingSampler(std::optional<unsigned> device, double retry_s)
    : device_(device),
      retry_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(retry_s))) {}

watch::Snapshot DriverRetryingSampler::sample() {
  const auto now = std::chrono::steady_clock::now();
  if (!sampler_ && (!last_try_ || now - *last_try_ >= retry_)) {
    last_try_ = now;
    auto nvml = backends::Nvml::open();
    auto devices = nvml ? watched_devices(**nvml, device_) : Result<std::vector<unsigned>>(make_error(nvml.error()));
    if (devices) sampler_ = std::make_unique<WatchSampler>(*nvml, *devices);
    else error_ = devices.error();
  }
  if (sampler_) return sampler_->sample();
  watch::Snapshot snapshot;
  snapshot.t_unix_seconds = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  snapshot.driver_error = error_;
  return snapshot;
}

}  // namespace vramdoc::backends
