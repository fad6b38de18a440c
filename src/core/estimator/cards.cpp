#include "core/estimator/cards.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

constexpr std::uint64_t mib(std::uint64_t n) { return n * MiB; }

// Totals in MiB as nvidia-smi prints them (ECC on for datacenter cards): the driver keeps a
// little for itself, so they are below the marketing size. Where each figure comes from, and
// how the derived ones (derived = true) were derived: docs/cli.md, "The card table".
constexpr std::array<GpuCard, 32> kCards = {{
    {"MI300X", mib(196592), "AMD Instinct MI300X", "", Vendor::Amd},
    {"GB200", mib(189503), "NVIDIA GB200", "", Vendor::Nvidia, true},
    {"B200", mib(183359), "NVIDIA B200"},
    {"H200", mib(143771), "NVIDIA H200", "H200 SXM,H200 141GB"},
    {"H20", mib(97871), "NVIDIA H20"},
    {"H100 NVL", mib(95830), "NVIDIA H100 NVL", "H100 94GB"},
    {"A100 80GB SXM", mib(81920), "NVIDIA A100-SXM4-80GB", "A100 80GB"},
    {"A100 80GB PCIe", mib(81920), "NVIDIA A100 80GB PCIe", "", Vendor::Nvidia, true},
    {"H100 SXM", mib(81559), "NVIDIA H100 80GB HBM3", "H100,H100 80GB,H100 SXM5"},
    {"H100 PCIe", mib(81559), "NVIDIA H100 PCIe", "", Vendor::Nvidia, true},
    {"A6000", mib(49140), "NVIDIA RTX A6000", "RTX A6000"},
    {"L40S", mib(46068), "NVIDIA L40S"},
    {"A40", mib(46068), "NVIDIA A40"},
    {"A100 40GB SXM", mib(40960), "NVIDIA A100-SXM4-40GB", "A100 40GB"},
    {"A100 40GB PCIe", mib(40960), "NVIDIA A100-PCIE-40GB", "", Vendor::Nvidia, true},
    {"V100 32GB", mib(32768), "Tesla V100-SXM2-32GB"},
    {"RTX 5090", mib(32607), "NVIDIA GeForce RTX 5090"},
    {"RTX 3090", mib(24576), "NVIDIA GeForce RTX 3090"},
    {"RTX 4090", mib(24564), "NVIDIA GeForce RTX 4090"},
    {"L4", mib(23034), "NVIDIA L4"},
    {"A10", mib(23028), "NVIDIA A10"},
    {"A10G", mib(23028), "NVIDIA A10G", "", Vendor::Nvidia, true},
    {"V100 16GB", mib(16384), "Tesla V100-SXM2-16GB"},
    {"RTX 4080", mib(16376), "NVIDIA GeForce RTX 4080"},
    {"T4", mib(15360), "Tesla T4"},
    {"RTX 3060 12GB", mib(12288), "NVIDIA GeForce RTX 3060", "RTX 3060"},
    {"RTX 4070", mib(12282), "NVIDIA GeForce RTX 4070"},
    {"RTX 4070 Ti", mib(12282), "NVIDIA GeForce RTX 4070 Ti"},
    {"RTX 2080 Ti", mib(11264), "NVIDIA GeForce RTX 2080 Ti", "", Vendor::Nvidia, true},
    {"RTX 3080", mib(10240), "NVIDIA GeForce RTX 3080", "RTX 3080 10GB", Vendor::Nvidia, true},
    {"RTX 3070", mib(8192), "NVIDIA GeForce RTX 3070"},
    {"RTX 4060", mib(8188), "NVIDIA GeForce RTX 4060"},
}};

// Lower-case letters and digits only, without a leading vendor or brand word.
std::string key(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (bool again = true; again;) {
    again = false;
    for (std::string_view word : {"nvidia", "geforce", "tesla", "amd", "instinct"}) {
      if (out.size() > word.size() && out.starts_with(word)) out.erase(0, word.size()), again = true;
    }
  }
  return out;
}

bool answers_to(const GpuCard& c, const std::string& want) {
  if (key(c.name) == want || (!c.smi_name.empty() && key(c.smi_name) == want)) return true;
  std::string_view rest = c.aliases;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (key(rest.substr(0, comma)) == want) return true;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return false;
}

}  // namespace

std::span<const GpuCard> gpu_cards() { return kCards; }

Result<GpuCard> find_gpu(std::string_view name) {
  const std::string want = key(name);
  if (want.empty()) return make_error("no card name given (see --list-gpus)");
  for (const auto& c : kCards) {
    if (answers_to(c, want)) return c;
  }
  std::vector<GpuCard> candidates;  // "4090" or "a100" alone: the cards whose names contain it
  for (const auto& c : kCards) {
    if (key(c.name).find(want) != std::string::npos || (!c.smi_name.empty() && key(c.smi_name).find(want) != std::string::npos))
      candidates.push_back(c);
  }
  if (candidates.empty()) return make_error("unknown card '" + std::string(name) + "' (see --list-gpus, or give --gpu-memory)");
  const bool one_size = std::all_of(candidates.begin(), candidates.end(),
                                    [&](const GpuCard& c) { return c.usable_bytes == candidates.front().usable_bytes; });
  if (one_size) return candidates.front();
  std::string choices;
  for (const auto& c : candidates)
    choices += (choices.empty() ? "" : ", ") + std::string(c.name) + " (" + format_gib(c.usable_bytes, 1) + " GiB)";
  return make_error("'" + std::string(name) + "' may mean cards of different sizes: " + choices +
                    "; give one of these names, or --gpu-memory");
}

}  // namespace vramdoc::estimator
