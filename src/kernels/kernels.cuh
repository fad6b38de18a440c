// Plain C++ signatures of the CUDA side, so that everything else is ordinary, testable C++.
// Each launcher allocates what it needs, verifies the kernel's result, frees, and returns the
// timed samples; a failed CUDA call or a wrong result comes back as an error, never an exit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::bench {

// Number of CUDA devices the runtime sees; -1 with `why` filled when the runtime cannot start.
int cuda_device_count(std::string* why);

// What the runtime says about one device (the facts the launchers size their work by).
struct DeviceProps {
  std::string name;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t l1_bytes = 0;  // unified L1/shared storage per SM
  std::uint64_t free_bytes = 0;
  double peak_bandwidth_bytes_per_s = 0;  // 2 x memory clock x bus width / 8, from the runtime
  bool managed_memory = false;  // concurrent managed access (page migration on demand)
  int device_count = 0;
};
// Selects `device` for this thread and reads its properties.
Result<DeviceProps> device_props(int device);

// A series of timed samples: each moved `bytes_per_sample` bytes in `seconds[i]`.
struct Timed {
  std::vector<double> seconds;
  double bytes_per_sample = 0;
  std::string config;    // the launch shape or variant used
  std::string variants;  // where tuned: every variant tried and its median rate, "name: GB/s; ..."
};

enum class StreamOp { Read, Write, Copy, Triad };
// Device-memory stream kernel: tries the variants (unroll x cache hints x block size), then
// times the fastest. Bytes counted read + write. `stream_bytes`: the test's footprint, split over the arrays the operation touches.
Result<Timed> device_stream(StreamOp op, std::uint64_t stream_bytes, int samples);
// L2 read bandwidth: every block reads one 64 KiB chunk of a `footprint_bytes` buffer, L1 bypassed.
Result<Timed> l2_read(std::uint64_t footprint_bytes, int samples);
// L1 read bandwidth: every block of every SM reads the same `footprint_bytes` buffer repeatedly.
Result<Timed> l1_read(std::uint64_t footprint_bytes, int samples);
// Shared-memory read bandwidth: every block reads its own shared array repeatedly.
Result<Timed> shared_read(int samples);

// One pointer-chase measurement: median cycles and ns per dependent load, SM clock seen.
struct Chase {
  double cycles = 0;
  double ns = 0;
  double sm_mhz = 0;
};
// Single-thread chase over a random cyclic permutation of `footprint_bytes` at 64 B stride
// (wider past 256 MiB to keep the permutation small), `reps` timed repetitions.
Result<Chase> chase_latency(std::uint64_t footprint_bytes, int reps);
// The same chase inside shared memory (32 KiB).
Result<Chase> shared_latency(int reps);

enum class CopyKind { H2D, D2H, Bidir };
// Host<->device copies of `bytes` in `chunk_bytes` pieces over `streams` streams, queued behind a
// spin kernel so launch gaps stay out; each sample copies the buffer `loops` times (a long
// sample averages out the host's short stalls, as nvbandwidth's 16 loops do). Bidir: both
// directions at once, H2D throughput reported (as nvbandwidth does) and `config` gives the total.
Result<Timed> host_copy(CopyKind kind, bool pinned, std::uint64_t bytes, std::uint64_t chunk_bytes, int streams,
                        int samples, int loops = 1);

// Managed memory of `bytes`, touched by the host before each sample, then read by a kernel
// (on-demand migration) or prefetched with cudaMemPrefetchAsync (`prefetch`).
Result<Timed> managed_migration(std::uint64_t bytes, bool prefetch, int samples);

// Peer copy GPU `src` -> GPU `dst` of `bytes`; an error when peer access is not possible.
Result<Timed> peer_copy(int src, int dst, std::uint64_t bytes, int samples);

// Host RAM: `threads` threads read (sum) or copy `bytes`; copy counts read + write.
Result<Timed> host_ram(bool copy, std::uint64_t bytes, unsigned threads, int samples);

}  // namespace vramdoc::bench
