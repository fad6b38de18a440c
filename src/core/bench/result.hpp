// What `vramdoc bench` measured, as plain data: statistics, results per level, curves.
// Filled by the bench runner (src/kernels), rendered by core/bench/render.hpp; no GPU type here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.hpp"

namespace vramdoc::bench {

// Median, minimum and maximum of a series of samples (in the unit of the samples).
struct Stats {
  double median = 0;
  double min = 0;
  double max = 0;
  int samples = 0;
};

// Summary of `values`; an empty series gives samples == 0 and zeros.
Stats summarize(std::vector<double> values);
// Rates in GB/s (10^9 bytes per second) of `bytes_per_sample` moved in each of `seconds`.
Stats rate_gbps(double bytes_per_sample, const std::vector<double>& seconds);

enum class Unit { GBps, Cycles };

// One line of the result table: a measure on one level of the hierarchy.
struct Measure {
  std::string level;          // "device", "L2", "L1", "shared", "latency", "host link", ...
  std::string name;           // "copy", "read", "H2D pinned", "near L2", ...
  Unit unit = Unit::GBps;
  Stats result;               // in `unit`; for latency also see `ns`
  std::optional<double> ns;   // latency in nanoseconds (median), where unit is Cycles
  std::optional<double> peak; // theoretical peak in `unit`, where one is known
  std::string bytes_counted;  // how bytes are counted: "read + write", "once", ...
  std::string config;         // how it ran: sizes, launch shape, the tuned variant
  std::string variants;       // the variants tried by the tuner and their rates (JSON only)
  std::string waived;         // not empty: not measured on this machine, and why
  std::string error;          // not empty: the measurement failed (a CUDA error or a wrong result)
};

// One point of the pointer-chase curve.
struct LatencyPoint {
  std::uint64_t footprint_bytes = 0;
  double cycles = 0;  // per dependent load, median over repetitions
  double ns = 0;
};

// One point of a bandwidth-by-footprint sweep (L1, L2, device).
struct SweepPoint {
  std::uint64_t footprint_bytes = 0;
  double gbps = 0;       // median
  double best_gbps = 0;  // the fastest sample (what BabelStream and gpu-benches' cache tests print)
};

// The whole run.
struct BenchReport {
  std::string device_name;
  unsigned device_index = 0;
  bool quick = false;
  std::optional<double> sm_clock_mhz;  // measured in-kernel during the latency run
  std::optional<GpuSample> before;     // NVML, read before the first measurement
  std::optional<GpuSample> after;      // NVML, read after the last
  std::vector<Measure> measures;
  std::vector<LatencyPoint> latency;
  std::vector<SweepPoint> l2_sweep;
  std::vector<SweepPoint> l1_sweep;
  std::vector<std::string> notes;      // other processes on the GPU, throttling, budget used
};

}  // namespace vramdoc::bench
