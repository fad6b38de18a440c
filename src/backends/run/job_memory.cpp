#include "backends/run/job_memory.hpp"

#include <algorithm>
#include <set>

#include "backends/nvml.hpp"

namespace vramdoc::backends {

namespace {

class NvmlJobProbe : public JobMemoryProbe {
 public:
  explicit NvmlJobProbe(std::shared_ptr<Nvml> nvml) : nvml_(std::move(nvml)) {
    for (unsigned i = 0; i < nvml_->device_count(); ++i) {
      auto m = nvml_->memory(i);
      totals_.push_back(m.ok() ? m->total_bytes : std::nullopt);
    }
  }

  JobMemory read(const std::vector<pid_t>& pids) override {
    const std::set<std::uint32_t> wanted(pids.begin(), pids.end());
    JobMemory out;
    std::uint64_t sum = 0;
    bool all_known = true;
    for (unsigned i = 0; i < nvml_->device_count(); ++i) {
      auto procs = nvml_->processes(i);
      if (!procs) {
        all_known = false;
        continue;
      }
      bool on_this = false;
      for (const auto& p : *procs) {
        if (!wanted.count(p.pid)) continue;
        on_this = true;
        if (p.used_bytes) sum += *p.used_bytes, out.processes.push_back({p.pid, i, *p.used_bytes});
        else all_known = false;
      }
      if (on_this) out.gpus.push_back(i);
    }
    if (all_known) out.process_used_bytes = sum;  // 0 is a real answer: the job holds nothing yet
    std::uint64_t device = 0;
    bool device_known = true;
    for (unsigned i = 0; i < nvml_->device_count(); ++i) {
      auto m = nvml_->memory(i);
      out.gpu_used_bytes.push_back(m.ok() ? m->used_bytes : std::nullopt);
      if (!out.gpus.empty() && std::find(out.gpus.begin(), out.gpus.end(), i) == out.gpus.end()) continue;
      if (out.gpu_used_bytes.back()) device += *out.gpu_used_bytes.back();
      else device_known = false;
    }
    if (device_known && nvml_->device_count() > 0) out.device_used_bytes = device;
    return out;
  }

  std::vector<timeline::GpuInfo> gpu_infos() const override {
    std::vector<timeline::GpuInfo> out;
    for (unsigned i = 0; i < nvml_->device_count(); ++i) {
      timeline::GpuInfo g;
      g.index = i;
      g.total_bytes = totals_[i];
      if (auto s = nvml_->static_info(i); s.ok()) g.uuid = s->uuid, g.pci_bus_id = s->pci_bus_id, g.name = s->name;
      out.push_back(std::move(g));
    }
    return out;
  }

  std::optional<std::uint64_t> capacity_bytes(const std::vector<unsigned>& gpus) const override {
    std::uint64_t sum = 0;
    for (unsigned i = 0; i < totals_.size(); ++i) {
      if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), i) == gpus.end()) continue;
      if (!totals_[i]) return std::nullopt;
      sum += *totals_[i];
    }
    return totals_.empty() ? std::nullopt : std::optional<std::uint64_t>(sum);
  }

  std::optional<std::string> device_name() const override {
    if (nvml_->device_count() == 0) return std::nullopt;
    auto s = nvml_->static_info(0);
    return s.ok() ? s->name : std::nullopt;
  }

 private:
  std::shared_ptr<Nvml> nvml_;
  std::vector<std::optional<std::uint64_t>> totals_;
};

}  // namespace

Result<std::unique_ptr<JobMemoryProbe>> open_nvml_job_probe() {
  auto nvml = Nvml::open();
  if (!nvml) return make_error(nvml.error());
  if ((*nvml)->device_count() == 0) return make_error("NVML sees no GPU");
  return std::unique_ptr<JobMemoryProbe>(new NvmlJobProbe(*nvml));
}

}  // namespace vramdoc::backends
