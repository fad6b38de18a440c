// dcgm-exporter's device metrics, written by `vramdoc watch --serve` under dcgm-exporter's own
// names, units, HELP texts and labels, so that dashboards and alerts written for NVIDIA's
// exporter read vramdoc unchanged (docs/watch.md lists them and where they differ).
#pragma once
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/watch/model.hpp"

namespace vramdoc::watch {

// Which metric families the exporter writes (`--metrics`).
struct MetricSets {
  bool vramdoc = true;  // vramdoc_*: per GPU and per process, bytes and ratios
  bool dcgm = true;     // DCGM_FI_DEV_*: per GPU, dcgm-exporter's units (MiB, %, MHz, W, KB/s)
};

// Parses `--metrics`: a comma-separated list of "vramdoc" and "dcgm" (at least one, each once).
Result<MetricSets> parse_metric_sets(std::string_view text);

// The DCGM_FI_DEV_* families of every GPU whose sample succeeded, labelled as dcgm-exporter does:
// gpu, UUID, pci_bus_id, device ("nvidia" + index), modelName and, when not empty, Hostname. A
// value the driver did not report has no sample line.
std::string render_dcgm_metrics(const Snapshot& snapshot, const std::string& hostname);

}  // namespace vramdoc::watch
