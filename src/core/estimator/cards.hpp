// The card table: the memory each common GPU offers, and finding a card by any name a user
// may give (vramdoc's short name, the name nvidia-smi prints, a common alias). Sources of every
// capacity: docs/cli.md ("The card table").
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc::estimator {

enum class Vendor { Nvidia, Amd };

struct GpuCard {
  std::string_view name;           // vramdoc's name, e.g. "RTX 4090", "H100 SXM"
  std::uint64_t usable_bytes = 0;  // nvidia-smi's "total" (AMD: rocm-smi's VRAM total), bytes
  std::string_view smi_name = {};  // what nvidia-smi (rocm-smi) prints, e.g. "NVIDIA GeForce RTX 4090"
  std::string_view aliases = {};   // other names it answers to, comma-separated, e.g. "H100,H100 80GB"
  Vendor vendor = Vendor::Nvidia;  // AMD: the estimator answers; vramdoc's CUDA tools do not run there
  bool derived = false;            // capacity derived from a sibling card, not read from a report
};

// Common cards, largest first.
std::span<const GpuCard> gpu_cards();
// Finds a card by name, ignoring case, spaces, dashes and a leading NVIDIA / GeForce / Tesla /
// AMD / Instinct: "rtx4090", "NVIDIA GeForce RTX 4090", "NVIDIA A100-SXM4-80GB", "A100-80GB".
// An exact name or alias wins; otherwise the cards whose names (or nvidia-smi names) contain the
// text ("4090"): the first when they all have the same memory, an error listing them when they
// differ ("A100": 80 or 40 GB), and an error naming --list-gpus when none does.
Result<GpuCard> find_gpu(std::string_view name);

}  // namespace vramdoc::estimator
