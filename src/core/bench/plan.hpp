// Planning a bench run: which suites, how much memory, which footprints. Pure and testable.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/bench/result.hpp"
#include "core/result.hpp"

namespace vramdoc::bench {

// The suites, in the order they run. suite_name() is the one place their names are spelt
// (--only, its help text and errors, the runner's table).
enum class Suite { Device, L2, L1, Latency, Host, UnifiedMemory, HostRam, Peer };
inline constexpr Suite kSuites[] = {Suite::Device, Suite::L2,          Suite::L1,      Suite::Latency,
                                    Suite::Host,   Suite::UnifiedMemory, Suite::HostRam, Suite::Peer};
// "device", "l2", "l1", "latency", "host", "um", "hostram", "p2p".
const char* suite_name(Suite suite);
// Every suite's name in order, comma-separated: "device,l2,...,p2p".
std::string suite_list();

// What the user asked for (plain options, filled by the CLI).
struct BenchOptions {
  bool quick = false;
  std::set<Suite> only;             // empty = every suite
  double memory_share = 0.5;        // at most this share of the free device memory
  unsigned device_index = 0;
  int samples = 0;                  // 0 = the default (10 quick, 20 full)
  bool wants(Suite suite) const { return only.empty() || only.count(suite) > 0; }
};

// Parses "device,l2" into suites; an unknown name is an error that lists the known ones.
Result<std::set<Suite>> parse_only(const std::string& text);

// Footprint of one stream test, all its arrays together (read and write use one array, copy two,
// triad three): the budget share x free, capped at 6 GiB (3 GiB quick), rounded down to 1 MiB.
// Every test moves the same bytes per launch, so launch gaps weigh the same (under 0.5 % at
// 4.8 TB/s). An error when the budget does not give each of three arrays 4 x the L2 size
// (footprints must be well beyond L2).
Result<std::uint64_t> plan_stream_bytes(std::uint64_t free_bytes, double share, std::uint64_t l2_bytes, bool quick);

// Bytes per array of a test with `arrays` arrays in a footprint of `stream_bytes`: 1 MiB multiples.
std::uint64_t stream_array_bytes(std::uint64_t stream_bytes, int arrays);

// Managed memory for the unified-memory suite: never above a quarter of the free device memory
// (more can hang the GPU), capped at 1 GiB (256 MiB quick); 0 when under 64 MiB would be left.
std::uint64_t plan_managed_bytes(std::uint64_t free_bytes, bool quick);

// Pointer-chase footprints from 4 KiB up to `max_bytes`: geometric, denser across the L2 range.
std::vector<std::uint64_t> latency_footprints(std::uint64_t l2_bytes, std::uint64_t max_bytes, bool quick);
// L2 bandwidth footprints: from 1 MiB to twice the L2 size.
std::vector<std::uint64_t> l2_footprints(std::uint64_t l2_bytes, bool quick);
// L1 bandwidth footprints (bytes read by every block of one SM): 8 KiB to 256 KiB.
std::vector<std::uint64_t> l1_footprints(bool quick);

// Median cycles (and ns) of the curve points whose footprint lies in [lo, hi]; none when empty.
std::optional<LatencyPoint> plateau(const std::vector<LatencyPoint>& curve, std::uint64_t lo, std::uint64_t hi);
// The latency table rows: L1, near L2, far L2, device memory, TLB-miss region, read off the
// curve with windows set by the L1 and L2 sizes (docs/bench.md says which).
std::vector<Measure> latency_measures(const std::vector<LatencyPoint>& curve, std::uint64_t l1_bytes,
                                      std::uint64_t l2_bytes);

// Sum over words w in [0, words) of (mul * w + add), modulo 2^32: the checksum a kernel that
// reads the fill pattern word w = mul * w + add must produce.
std::uint32_t affine_word_sum(std::uint64_t words, std::uint32_t mul, std::uint32_t add);

// A note when NVML's clocks-event reasons show power or thermal throttling; none otherwise.
std::optional<std::string> throttle_note(std::uint64_t reasons);

}  // namespace vramdoc::bench
