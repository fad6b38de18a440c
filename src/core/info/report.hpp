// What `vramdoc info` reports, and its renderers (text and JSON). Pure: no GPU types, no I/O.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu.hpp"

namespace vramdoc::info {

// One GPU: its static facts (NVML completed by the CUDA driver) and its memory right now.
struct InfoGpu {
  GpuStatic facts;
  std::optional<GpuMemory> memory;
};

struct InfoReport {
  HostInfo host;
  DriverInfo driver;
  std::vector<InfoGpu> gpus;
  // One line each: a library that was not found or a call that failed, e.g.
  // "NVML: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)".
  std::vector<std::string> problems;
};

// The readable report: host, driver, then per GPU the hierarchy registers -> shared/L1 -> L2 ->
// device memory -> host link -> host RAM and the "VRAM vs RAM" table; unknowns read "n/a".
std::string render_info_text(const InfoReport& report);

// Every field, unknowns as null (never 0); keys in a stable order.
nlohmann::ordered_json info_to_json(const InfoReport& report);
// `info --json`: those fields as the JSON document vramdoc.info/1.
std::string render_info_json(const InfoReport& report);

// How the theoretical figures are computed (shown under the text report, carried in the JSON).
extern const char* const kMemoryBandwidthFormula;
extern const char* const kPcieBandwidthFormula;
extern const char* const kRamBandwidthUnknownReason;

}  // namespace vramdoc::info
