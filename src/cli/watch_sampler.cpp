#include "cli/watch_sampler.hpp"

#include <chrono>

namespace vramdoc::cli {

WatchSampler::WatchSampler(std::shared_ptr<backends::Nvml> nvml, std::vector<unsigned> devices)
    : nvml_(std::move(nvml)), devices_(std::move(devices)) {}

GpuStatic WatchSampler::static_info(unsigned index) {
  auto found = statics_.find(index);
  if (found != statics_.end()) return found->second;
  auto info = nvml_->static_info(index);
  if (info.ok()) return statics_[index] = *info;
  GpuStatic unknown;  // not cached: identity is read again next time (the device may come back)
  unknown.index = index;
  return unknown;
}

watch::Snapshot WatchSampler::sample() {
  watch::Snapshot snapshot;
  snapshot.t_unix_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<Result<GpuSample>> samples;
  std::vector<std::uint32_t> pids;
  for (unsigned index : devices_) {
    samples.push_back(nvml_->sample(index));
    if (samples.back().ok())
      for (const auto& p : samples.back()->processes) pids.push_back(p.pid);
  }
  auto details = processes_.lookup(pids);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    auto& s = samples[i];
    if (s.ok()) {
      snapshot.gpus.push_back(watch::make_gpu_view(static_info(devices_[i]), std::move(*s), std::nullopt, details));
    } else {
      snapshot.gpus.push_back(watch::make_gpu_view(static_info(devices_[i]), std::nullopt, s.error(), details));
    }
  }
  return snapshot;
}

}  // namespace vramdoc::cli
