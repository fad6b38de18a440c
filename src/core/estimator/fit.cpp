#include "core/estimator/fit.hpp"

#include <array>
#include <cctype>

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

// nvidia-smi's "total" for each card (MiB): the driver keeps a little for itself, so this is
// below the marketing size. ECC-on datacenter numbers.
constexpr std::array<GpuCard, 17> kCards = {{
    {"H200", 143771 * MiB},       {"H100 80GB", 81559 * MiB},  {"A100 80GB", 81920 * MiB},
    {"A6000", 49140 * MiB},       {"L40S", 46068 * MiB},       {"A100 40GB", 40960 * MiB},
    {"V100 32GB", 32768 * MiB},   {"RTX 5090", 32607 * MiB},   {"RTX 4090", 24564 * MiB},
    {"RTX 3090", 24576 * MiB},    {"A10", 23028 * MiB},        {"L4", 23034 * MiB},
    {"RTX 4080", 16376 * MiB},    {"V100 16GB", 16384 * MiB},  {"T4", 15360 * MiB},
    {"RTX 3060 12GB", 12288 * MiB}, {"RTX 3070", 8192 * MiB},
}};

std::string squash(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

template <class Set>
Result<SearchResult> largest(const ModelConfig& model, Options options, std::uint64_t usable, Set set) {
  std::uint64_t lo = 0, hi = 1ULL << 24;  // lo fits (0 = nothing does), hi does not
  SearchResult best;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    set(options, mid);
    auto e = estimate(model, options);
    if (e && fits(*e, usable)) {
      lo = mid;
      best = {mid, e->process_bytes, usable - e->process_bytes};
    } else if (!e && mid == 1) {
      return make_error(e.error());
    } else {
      hi = mid;
    }
  }
  return best;
}

}  // namespace

std::span<const GpuCard> gpu_cards() { return kCards; }

std::optional<GpuCard> find_gpu(std::string_view name) {
  const std::string want = squash(name);
  for (const auto& c : kCards) {
    if (squash(c.name) == want) return c;
  }
  for (const auto& c : kCards) {  // "4090" or "a100" alone: the first card whose name contains it
    if (!want.empty() && squash(c.name).find(want) != std::string::npos) return c;
  }
  return std::nullopt;
}

bool fits(const Estimate& e, std::uint64_t usable_bytes) {
  const std::uint64_t with_margin = saturating_add(e.process_bytes, e.process_bytes / 100 * kFitMarginPercent);
  return with_margin <= usable_bytes;
}

Result<SearchResult> max_batch(const ModelConfig& model, Options options, std::uint64_t usable_bytes) {
  return largest(model, options, usable_bytes, [](Options& o, std::uint64_t v) { o.batch = v; });
}

Result<SearchResult> max_seq(const ModelConfig& model, Options options, std::uint64_t usable_bytes) {
  return largest(model, options, usable_bytes, [](Options& o, std::uint64_t v) { o.seq = v; });
}

}  // namespace vramdoc::estimator
