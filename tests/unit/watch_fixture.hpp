// Hand-built snapshots for the watch tests: two GPUs, one busy with two processes.
#pragma once
#include "core/units.hpp"
#include "core/watch/model.hpp"
#include "core/watch/prometheus.hpp"

namespace vramdoc::watch::fixture {

inline GpuStatic h200_static(unsigned index) {
  GpuStatic s;
  s.index = index;
  s.name = "NVIDIA H200";
  s.uuid = "GPU-0000000" + std::to_string(index);
  s.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  s.pcie_bandwidth_bytes_per_s = 63.0e9;
  return s;
}

// GPU 0: 40 of 140 GiB used, SM 40 %, memory controller 95 % (bandwidth-bound), two processes.
inline GpuSample busy_sample() {
  GpuSample s;
  s.index = 0;
  s.memory.total_bytes = 140 * GiB;
  s.memory.used_bytes = 40 * GiB;
  s.memory.free_bytes = 100 * GiB;
  s.memory.reserved_bytes = GiB / 2;
  s.sm_util_percent = 40;
  s.mem_util_percent = 95;
  s.pcie_tx_bytes_per_s = 1'000'000'000;
  s.pcie_rx_bytes_per_s = 2'000'000'000;
  s.sm_clock_mhz = 1980;
  s.mem_clock_mhz = 2619;
  s.power_watts = 310.5;
  s.power_limit_watts = 700;
  s.temperature_c = 45;
  s.throttle_reasons = 0;
  GpuProcess a{1234, 0, 30 * GiB, std::nullopt, std::nullopt};
  GpuProcess b{77, 0, 10 * GiB, std::nullopt, std::nullopt};
  s.processes = {b, a};
  return s;
}

inline Snapshot two_gpus(bool second_fails = true) {
  std::map<std::uint32_t, ProcessDetails> details;
  details[1234] = ProcessDetails{"alice", "python train.py --lr 0.1", 7, "0123456789ab", "python", std::nullopt, std::nullopt};
  details[77] = ProcessDetails{"bob", "./infer", std::nullopt, std::nullopt, "infer", std::nullopt, std::nullopt};
  std::map<std::uint32_t, ProcessUsage> usage;
  usage[1234] = ProcessUsage{97.4, 12 * GiB, 3723.0, 50000};  // 1:02:03
  usage[77] = ProcessUsage{std::nullopt, GiB / 4, 65.0, 90000};
  Snapshot snap;
  snap.t_unix_seconds = 1700000000.25;
  snap.gpus.push_back(make_gpu_view(h200_static(0), busy_sample(), std::nullopt, details, usage));
  if (second_fails) {
    snap.gpus.push_back(make_gpu_view(h200_static(1), std::nullopt, "NVML: GPU is lost", details));
  } else {
    GpuSample idle;
    idle.index = 1;
    idle.memory.total_bytes = 140 * GiB;  // everything else unknown
    snap.gpus.push_back(make_gpu_view(h200_static(1), idle, std::nullopt, details));
  }
  return snap;
}

// Exporter options with --export-command.
inline ExportOptions with_command() {
  ExportOptions options;
  options.command = true;
  return options;
}

}  // namespace vramdoc::watch::fixture
