// The bench runner: runs the suites on one GPU and fills a BenchReport. Plain C++ interface;
// the CLI reaches it through the feature registry (cli/features.cpp), never directly.
#pragma once
#include <functional>
#include <string>

#include "kernels/kernels.cuh"
#include "core/bench/plan.hpp"

namespace vramdoc::bench {

// Called with one line per step ("device memory: copy"), for a progress display.
using Progress = std::function<void(const std::string&)>;

// Runs what `options` asks for. An error when no GPU is usable or too little memory is free;
// a failed measurement is kept in its Measure's `error` and the run goes on.
Result<BenchReport> run_bench(const BenchOptions& options, const Progress& progress);

// What the suites share: the device, the budget, the peaks and the report being filled.
struct SuiteContext {
  const BenchOptions& options;
  const Progress& progress;
  DeviceProps props;
  int samples = 10;
  std::uint64_t budget_bytes = 0;         // share x free device memory
  std::uint64_t stream_bytes = 0;         // footprint of one stream test, all its arrays (device suite)
  std::optional<double> device_peak_gbps;
  std::optional<double> link_peak_gbps;   // PCIe, per direction
  std::optional<double> sm_mhz;           // for the L1 and shared peaks
};

// One suite each (suites.cpp); they append to `report`.
void run_device_suite(SuiteContext& ctx, BenchReport& report);
void run_l2_suite(SuiteContext& ctx, BenchReport& report);
void run_l1_suite(SuiteContext& ctx, BenchReport& report);
void run_latency_suite(SuiteContext& ctx, BenchReport& report);
void run_host_suite(SuiteContext& ctx, BenchReport& report);
void run_um_suite(SuiteContext& ctx, BenchReport& report);
void run_hostram_suite(SuiteContext& ctx, BenchReport& report);
void run_p2p_suite(SuiteContext& ctx, BenchReport& report);

}  // namespace vramdoc::bench
