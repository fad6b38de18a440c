// run_bench: checks the GPU and the memory budget, reads NVML before and after, runs the suites.
#include <unistd.h>

#include <chrono>

#include "backends/nvml.hpp"
#include "kernels/runner.hpp"
#include "core/units.hpp"

namespace vramdoc::bench {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Other processes holding memory on the GPU make every number lower: say so.
void note_other_processes(const GpuSample& sample, BenchReport& report) {
  std::uint64_t bytes = 0;
  unsigned count = 0;
  for (const auto& p : sample.processes) {
    if (p.pid == static_cast<std::uint32_t>(getpid())) continue;
    ++count;
    bytes += p.used_bytes.value_or(0);
  }
  if (count > 0) {
    report.notes.push_back(std::to_string(count) + " other process(es) on this GPU (" + format_bytes(bytes) +
                           "): they share its bandwidth, results may be low");
  }
}

using SuiteFn = void (*)(SuiteContext&, BenchReport&);

// The function that runs `suite` (every Suite has a case: the compiler checks the switch).
SuiteFn suite_function(Suite suite) {
  switch (suite) {
    case Suite::Device: return run_device_suite;
    case Suite::L2: return run_l2_suite;
    case Suite::L1: return run_l1_suite;
    case Suite::Latency: return run_latency_suite;
    case Suite::Host: return run_host_suite;
    case Suite::UnifiedMemory: return run_um_suite;
    case Suite::HostRam: return run_hostram_suite;
    case Suite::Peer: return run_p2p_suite;
  }
  return run_device_suite;
}

}  // namespace

Result<BenchReport> run_bench(const BenchOptions& options, const Progress& progress) {
  std::string why;
  const int count = cuda_device_count(&why);
  if (count < 0) return make_error("the CUDA runtime cannot start (" + why + "): is the NVIDIA driver installed?");
  if (count == 0) return make_error("no CUDA GPU found");
  if (options.device_index >= static_cast<unsigned>(count)) {
    return make_error("GPU " + std::to_string(options.device_index) + " does not exist (" + std::to_string(count) +
                      " present)");
  }
  auto props = device_props(static_cast<int>(options.device_index));
  if (!props) return make_error(props.error());

  SuiteContext ctx{options, progress, *props, 10, 0, 0, std::nullopt, std::nullopt, std::nullopt};
  ctx.samples = options.samples > 0 ? options.samples : (options.quick ? 10 : 20);
  ctx.budget_bytes = static_cast<std::uint64_t>(static_cast<double>(props->free_bytes) * options.memory_share);
  if (ctx.budget_bytes < 256 * MiB) {
    return make_error("too little free device memory: " + format_bytes(ctx.budget_bytes) +
                      " allowed (--memory-share of " + format_bytes(props->free_bytes) + " free), 256 MiB needed");
  }
  if (options.wants(Suite::Device)) {
    auto bytes = plan_stream_bytes(props->free_bytes, options.memory_share, props->l2_bytes, options.quick);
    if (!bytes) return make_error(bytes.error());
    ctx.stream_bytes = *bytes;
  }

  BenchReport report;
  report.device_name = props->name;
  report.device_index = options.device_index;
  report.quick = options.quick;
  report.notes.push_back("memory budget " + format_bytes(ctx.budget_bytes) + " (" +
                         std::to_string(static_cast<int>(options.memory_share * 100 + 0.5)) + " % of " +
                         format_bytes(props->free_bytes) + " free)");
  if (props->peak_bandwidth_bytes_per_s > 0) ctx.device_peak_gbps = props->peak_bandwidth_bytes_per_s / 1e9;

  auto nvml = backends::Nvml::open();
  if (nvml) {
    if (auto info = (*nvml)->static_info(options.device_index)) {
      if (info->theoretical_bandwidth_bytes_per_s) ctx.device_peak_gbps = *info->theoretical_bandwidth_bytes_per_s / 1e9;
      if (info->pcie_bandwidth_bytes_per_s) ctx.link_peak_gbps = *info->pcie_bandwidth_bytes_per_s / 1e9;
    }
    if (auto s = (*nvml)->sample(options.device_index)) {
      s->t_seconds = now_seconds();
      note_other_processes(*s, report);
      report.before = *s;
    }
  } else {
    report.notes.push_back("NVML unavailable (" + nvml.error() + "): no clocks, temperature or link peak");
  }

  for (Suite suite : kSuites) {
    if (options.wants(suite)) suite_function(suite)(ctx, report);
  }

  if (nvml) {
    if (auto s = (*nvml)->sample(options.device_index)) {
      s->t_seconds = now_seconds();
      if (s->throttle_reasons) {
        if (auto note = throttle_note(*s->throttle_reasons)) report.notes.push_back(*note);
      }
      report.after = *s;
    }
  }
  return report;
}

}  // namespace vramdoc::bench
