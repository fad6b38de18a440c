#include "core/bench/plan.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/units.hpp"

namespace vramdoc::bench {

Stats summarize(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
  s.min = values.front();
  s.max = values.back();
  s.samples = static_cast<int>(n);
  return s;
}

Stats rate_gbps(double bytes_per_sample, const std::vector<double>& seconds) {
  std::vector<double> rates;
  rates.reserve(seconds.size());
  for (double s : seconds) {
    if (s > 0) rates.push_back(bytes_per_sample / s / 1e9);
  }
  return summarize(std::move(rates));
}


const char* suite_name(Suite suite) {
  switch (suite) {
    case Suite::Device: return "device";
    case Suite::L2: return "l2";
    case Suite::L1: return "l1";
    case Suite::Latency: return "latency";
    case Suite::Host: return "host";
    case Suite::UnifiedMemory: return "um";
    case Suite::HostRam: return "hostram";
    case Suite::Peer: return "p2p";
  }
  return "?";
}

std::string suite_list() {
  std::string out;
  for (Suite s : kSuites) out += (out.empty() ? "" : ",") + std::string(suite_name(s));
  return out;
}

Result<std::set<Suite>> parse_only(const std::string& text) {
  std::set<Suite> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const auto* found = std::find_if(std::begin(kSuites), std::end(kSuites), [&](Suite s) { return item == suite_name(s); });
    if (found == std::end(kSuites)) return make_error("unknown suite '" + item + "' in --only (known: " + suite_list() + ")");
    out.insert(*found);
  }
  if (out.empty()) return make_error("--only needs at least one suite");
  return out;
}

std::uint64_t stream_array_bytes(std::uint64_t stream_bytes, int arrays) {
  return arrays < 1 ? 0 : stream_bytes / static_cast<std::uint64_t>(arrays) / MiB * MiB;
}

Result<std::uint64_t> plan_stream_bytes(std::uint64_t free_bytes, double share, std::uint64_t l2_bytes, bool quick) {
  if (!(share > 0.0 && share <= 1.0)) return make_error("--memory-share must be in (0, 1]");
  const auto budget = static_cast<std::uint64_t>(static_cast<double>(free_bytes) * share);
  const std::uint64_t cap = quick ? 3 * GiB : 6 * GiB;
  const std::uint64_t total = std::min(cap, budget) / (3 * MiB) * (3 * MiB);
  const std::uint64_t per_array = stream_array_bytes(total, 3);
  const std::uint64_t needed = std::max<std::uint64_t>(4 * l2_bytes, 64 * MiB);
  if (per_array < needed) {
    return make_error("too little free device memory: " + format_bytes(budget) + " (" +
                      std::to_string(static_cast<int>(share * 100)) + " % of " + format_bytes(free_bytes) +
                      " free) gives " + format_bytes(per_array) + " per array, " + format_bytes(needed) +
                      " needed (4 x L2); free memory or raise --memory-share");
  }
  return total;
}

std::uint64_t plan_managed_bytes(std::uint64_t free_bytes, bool quick) {
  const std::uint64_t cap = quick ? 256 * MiB : GiB;
  const std::uint64_t bytes = std::min(cap, free_bytes / 4) / MiB * MiB;
  return bytes < 64 * MiB ? 0 : bytes;
}

std::vector<std::uint64_t> latency_footprints(std::uint64_t l2_bytes, std::uint64_t max_bytes, bool quick) {
  std::vector<std::uint64_t> out;
  const double step = quick ? 2.0 : std::sqrt(2.0);
  for (double f = 4.0 * KiB; f <= static_cast<double>(max_bytes); f *= step) {
    out.push_back(static_cast<std::uint64_t>(f) / 64 * 64);
  }
  // The near/far L2 partitions show between a quarter of L2 and L2: sample them densely.
  for (double frac : {0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9}) {
    const auto f = static_cast<std::uint64_t>(frac * static_cast<double>(l2_bytes)) / 64 * 64;
    if (f <= max_bytes && (!quick || frac == 0.4 || frac == 0.75)) out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::uint64_t> l2_footprints(std::uint64_t l2_bytes, bool quick) {
  std::vector<double> fractions = {1.0 / 16, 1.0 / 8, 1.0 / 4, 3.0 / 8, 1.0 / 2, 9.0 / 16, 5.0 / 8, 3.0 / 4, 1.0, 1.5, 2.0};
  if (quick) fractions = {1.0 / 16, 9.0 / 16, 1.0, 2.0};
  std::vector<std::uint64_t> out;
  for (double f : fractions) out.push_back(static_cast<std::uint64_t>(f * static_cast<double>(l2_bytes)) / MiB * MiB);
  out.erase(std::remove(out.begin(), out.end(), 0ULL), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::uint64_t> l1_footprints(bool quick) {
  if (quick) return {16 * KiB, 64 * KiB, 192 * KiB};
  return {8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 96 * KiB, 128 * KiB, 160 * KiB, 192 * KiB, 256 * KiB};
}

std::optional<LatencyPoint> plateau(const std::vector<LatencyPoint>& curve, std::uint64_t lo, std::uint64_t hi) {
  std::vector<double> cycles, ns;
  std::vector<std::uint64_t> sizes;
  for (const auto& p : curve) {
    if (p.footprint_bytes >= lo && p.footprint_bytes <= hi) {
      cycles.push_back(p.cycles);
      ns.push_back(p.ns);
      sizes.push_back(p.footprint_bytes);
    }
  }
  if (cycles.empty()) return std::nullopt;
  LatencyPoint out;
  out.footprint_bytes = sizes[sizes.size() / 2];
  out.cycles = summarize(cycles).median;
  out.ns = summarize(ns).median;
  return out;
}

std::vector<Measure> latency_measures(const std::vector<LatencyPoint>& curve, std::uint64_t l1_bytes,
                                      std::uint64_t l2_bytes) {
  struct Window {
    const char* name;
    std::uint64_t lo, hi;
  };
  const std::uint64_t max_footprint = curve.empty() ? 0 : curve.back().footprint_bytes;
  const Window windows[] = {
      {"L1", 8 * KiB, l1_bytes / 2},
      {"near L2", 4 * l1_bytes, l2_bytes * 3 / 10},
      {"far L2", l2_bytes * 7 / 10, l2_bytes * 8 / 10},
      {"device memory", 2 * l2_bytes, 8 * l2_bytes},
      {"TLB-miss region", std::max<std::uint64_t>(2 * GiB, 32 * l2_bytes), max_footprint},
  };
  std::vector<Measure> out;
  for (const auto& w : windows) {
    Measure m;
    m.level = "latency";
    m.name = w.name;
    m.unit = Unit::Cycles;
    m.config = "footprint " + format_bytes(w.lo, 0) + " - " + format_bytes(w.hi, 0) + ", random chase, 64 B stride";
    const auto p = plateau(curve, w.lo, w.hi);
    if (!p || w.lo > w.hi) {
      m.waived = "no curve point in " + format_bytes(w.lo, 0) + " - " + format_bytes(w.hi, 0);
    } else {
      m.result = summarize({p->cycles});
      m.ns = p->ns;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::uint32_t affine_word_sum(std::uint64_t words, std::uint32_t mul, std::uint32_t add) {
  // sum w = W(W-1)/2: halve the even factor first so the product is exact modulo 2^64.
  const std::uint64_t tri = words % 2 == 0 ? (words / 2) * (words - 1) : words * ((words - 1) / 2);
  return static_cast<std::uint32_t>(tri) * mul + static_cast<std::uint32_t>(words) * add;
}

std::optional<std::string> throttle_note(std::uint64_t reasons) {
  // NVML's nvmlClocksEventReason* bits that lower clocks under load.
  static const std::pair<std::uint64_t, const char*> kReasons[] = {
      {0x4, "software power cap"}, {0x8, "hardware slowdown"}, {0x40, "software thermal slowdown"},
      {0x80, "hardware thermal slowdown"}, {0x100, "hardware power brake"}};
  std::string which;
  for (const auto& [bit, name] : kReasons) {
    if (reasons & bit) which += (which.empty() ? "" : ", ") + std::string(name);
  }
  if (which.empty()) return std::nullopt;
  return "the GPU was throttling (" + which + "): bandwidths may be below what the card can do";
}

}  // namespace vramdoc::bench
