// On-chip bandwidth: L2 (many blocks re-reading chunks of a footprint, L1 bypassed), L1 (every
// block of an SM re-reading one small buffer) and shared memory.
#include <cstdio>

#include "bench/common.cuh"

namespace vramdoc::bench {

namespace {

constexpr std::uint32_t kSeed = 0x2468u;
constexpr int kL2Block = 256, kL2Unroll = 16;           // 64 KiB per block, 16 loads in flight
constexpr std::uint64_t kL2Chunk = kL2Block * kL2Unroll; // uint4 per block
constexpr int kL1Block = 256;
constexpr int kSharedBlock = 256, kSharedWords = 2048;  // uint4: 32 KiB per block

__global__ void l2_kernel(const uint4* __restrict__ buf, unsigned chunks, unsigned* slots) {
  const uint4* p = buf + (blockIdx.x % chunks) * kL2Chunk + threadIdx.x;
  uint4 v[kL2Unroll];
#pragma unroll
  for (int u = 0; u < kL2Unroll; ++u) v[u] = __ldcg(p + u * kL2Block);
  std::uint32_t acc = 0;
#pragma unroll
  for (int u = 0; u < kL2Unroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  detail::add_to_slots(slots, acc);
}

// Each block reads `per_thread` x blockDim uint4 from `buf`, `passes` times. `zero` is 0 at run
// time: adding it each pass keeps the compiler from hoisting the loads out of the pass loop.
__global__ void l1_kernel(const uint4* __restrict__ buf, unsigned per_thread, unsigned passes, unsigned zero,
                          unsigned* slots) {
  const uint4* p = buf + threadIdx.x;
  std::uint32_t acc = 0;
  for (unsigned pass = 0; pass < passes; ++pass) {
#pragma unroll 8
    for (unsigned k = 0; k < per_thread; ++k) {
      const uint4 v = p[k * kL1Block];
      acc += v.x + v.y + v.z + v.w;
    }
    p += zero;
  }
  detail::add_to_slots(slots, acc);
}

__global__ void shared_kernel(unsigned passes, unsigned zero, unsigned* slots) {
  __shared__ uint4 s[kSharedWords];
  for (unsigned i = threadIdx.x; i < kSharedWords; i += blockDim.x) {
    const auto w = 4 * i;
    s[i] = make_uint4(w + kSeed, w + 1 + kSeed, w + 2 + kSeed, w + 3 + kSeed);
  }
  __syncthreads();
  std::uint32_t acc = 0;
  unsigned base = threadIdx.x;
  for (unsigned pass = 0; pass < passes; ++pass) {
#pragma unroll
    for (unsigned k = 0; k < kSharedWords / kSharedBlock; ++k) {
      const uint4 v = s[base + k * kSharedBlock];
      acc += v.x + v.y + v.z + v.w;
    }
    base += zero;
  }
  detail::add_to_slots(slots, acc);
}

// Times `launches` launches of `launch` per sample and checks the slot checksum after each.
template <class Launch>
Result<Timed> timed_reads(const char* what, Launch launch, int launches, int samples, std::uint32_t want_per_launch,
                          unsigned* slots) {
  Timed out;
  detail::Event start, end;
  for (int i = -1; i < samples; ++i) {  // sample -1 is the warm-up
    if (auto r = detail::clear_slots(slots); !r) return make_error(r.error());
    VD_CUDA(cudaEventRecord(start.e));
    for (int l = 0; l < launches; ++l) launch();
    VD_CUDA(cudaGetLastError());
    VD_CUDA(cudaEventRecord(end.e));
    auto t = detail::elapsed_seconds(start.e, end.e);
    if (!t) return make_error(t.error());
    auto sum = detail::sum_slots(slots);
    if (!sum) return make_error(sum.error());
    if (auto ok = detail::expect_checksum(what, *sum, want_per_launch * launches); !ok) return make_error(ok.error());
    if (i >= 0) out.seconds.push_back(*t);
  }
  return out;
}

Result<int> sm_count() {
  int device = 0, sms = 0;
  VD_CUDA(cudaGetDevice(&device));
  VD_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace

Result<Timed> l2_read(std::uint64_t footprint_bytes, int samples) {
  const std::uint64_t chunk_bytes = kL2Chunk * sizeof(uint4);
  const auto chunks = static_cast<unsigned>(footprint_bytes / chunk_bytes);
  if (chunks == 0) return make_error("l2 read: footprint under 64 KiB");
  detail::DeviceArray<uint4> buf;
  detail::DeviceArray<unsigned> slots;
  VD_CUDA(buf.alloc(chunks * kL2Chunk));
  VD_CUDA(slots.alloc(detail::kSlots));
  if (auto r = detail::fill_affine(buf.ptr, chunks * kL2Chunk, 1, kSeed); !r) return make_error(r.error());
  const unsigned reps = (65536 + chunks - 1) / chunks;  // about 4 GiB read per launch
  const unsigned grid = chunks * reps;
  const std::uint32_t want = detail::affine_sum(4 * chunks * kL2Chunk, 1, kSeed) * reps;
  const int launches = 2;
  auto out = timed_reads("l2 read", [&] { l2_kernel<<<grid, kL2Block>>>(buf.ptr, chunks, slots.ptr); }, launches,
                         samples, want, slots.ptr);
  if (!out) return out;
  out->bytes_per_sample = static_cast<double>(grid) * chunk_bytes * launches;
  char cfg[160];
  std::snprintf(cfg, sizeof cfg, "%u blocks x %d threads, 64 KiB per block, ld.global.cg, %d launches per sample",
                grid, kL2Block, launches);
  out->config = cfg;
  return out;
}

Result<Timed> l1_read(std::uint64_t footprint_bytes, int samples) {
  const unsigned per_thread = static_cast<unsigned>(footprint_bytes / sizeof(uint4) / kL1Block);
  if (per_thread == 0) return make_error("l1 read: footprint under 4 KiB");
  auto sms = sm_count();
  if (!sms) return make_error(sms.error());
  VD_CUDA(cudaFuncSetAttribute(l1_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  int per_sm = 0;
  VD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, l1_kernel, kL1Block, 0));
  const int grid = *sms * per_sm;
  const std::uint64_t count = std::uint64_t{per_thread} * kL1Block;
  detail::DeviceArray<uint4> buf;
  detail::DeviceArray<unsigned> slots;
  VD_CUDA(buf.alloc(count));
  VD_CUDA(slots.alloc(detail::kSlots));
  if (auto r = detail::fill_affine(buf.ptr, count, 1, kSeed); !r) return make_error(r.error());
  // About 100 GB per launch: milliseconds at L1 speed.
  const auto passes = static_cast<unsigned>(1e11 / (static_cast<double>(grid) * count * sizeof(uint4))) + 1;
  const std::uint32_t want = detail::affine_sum(4 * count, 1, kSeed) * passes * static_cast<std::uint32_t>(grid);
  auto out = timed_reads("l1 read", [&] { l1_kernel<<<grid, kL1Block>>>(buf.ptr, per_thread, passes, 0, slots.ptr); },
                         1, samples, want, slots.ptr);
  if (!out) return out;
  out->bytes_per_sample = static_cast<double>(grid) * static_cast<double>(count * sizeof(uint4)) * passes;
  char cfg[160];
  std::snprintf(cfg, sizeof cfg, "%d blocks x %d threads (%d per SM) re-read one buffer, %u passes", grid, kL1Block,
                per_sm, passes);
  out->config = cfg;
  return out;
}

Result<Timed> shared_read(int samples) {
  auto sms = sm_count();
  if (!sms) return make_error(sms.error());
  int per_sm = 0;
  VD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shared_kernel, kSharedBlock, 0));
  const int grid = *sms * per_sm;
  detail::DeviceArray<unsigned> slots;
  VD_CUDA(slots.alloc(detail::kSlots));
  const std::uint64_t bytes = kSharedWords * sizeof(uint4);
  const auto passes = static_cast<unsigned>(1e11 / (static_cast<double>(grid) * bytes)) + 1;
  const std::uint32_t want = detail::affine_sum(4 * kSharedWords, 1, kSeed) * passes * static_cast<std::uint32_t>(grid);
  auto out = timed_reads("shared read", [&] { shared_kernel<<<grid, kSharedBlock>>>(passes, 0, slots.ptr); }, 1,
                         samples, want, slots.ptr);
  if (!out) return out;
  out->bytes_per_sample = static_cast<double>(grid) * static_cast<double>(bytes) * passes;
  char cfg[160];
  std::snprintf(cfg, sizeof cfg, "%d blocks x %d threads (%d per SM), 32 KiB each, %u passes", grid, kSharedBlock,
                per_sm, passes);
  out->config = cfg;
  return out;
}

}  // namespace vramdoc::bench
