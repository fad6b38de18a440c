// On-chip bandwidth: L2 (many blocks re-reading chunks of a footprint, L1 bypassed), L1 (every
// block of an SM re-reading one small buffer) and shared memory.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "kernels/common.cuh"

namespace vramdoc::bench {

namespace {

constexpr std::uint32_t kSeed = 0x2468u;
constexpr int kSharedBlock = 256, kSharedWords = 2048;  // uint4: 32 KiB per block

// Each block reads one chunk of B x U uint4, chunk r = (block index mod chunks), U loads in flight
// per thread; CG: L1 bypassed. Spread: load u of chunk r is the slab u * chunks + r of B uint4, so
// a chunk is spread over the whole footprint and the resident blocks read one window of it
// together (gpu-l2-cache's layout); otherwise a chunk is contiguous. One sum stored per block.
template <int B, int U, bool CG, bool Spread>
__global__ void l2_kernel(const uint4* __restrict__ buf, unsigned chunks, unsigned* partials) {
  const std::uint64_t r = blockIdx.x % chunks;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::uint64_t slab = Spread ? static_cast<std::uint64_t>(u) * chunks + r : r * U + u;
    const uint4* p = buf + slab * B + threadIdx.x;
    v[u] = CG ? __ldcg(p) : *p;
  }
  std::uint32_t acc = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  detail::store_block_sum(partials, acc);
}

// Each block reads `per_thread` x blockDim uint4 from `buf`, `passes` times. `zero` is 0 at run
// time: adding it each pass keeps the compiler from hoisting the loads out of the pass loop.
template <bool LDG>
__global__ void l1_kernel(const uint4* __restrict__ buf, unsigned per_thread, unsigned passes, unsigned zero,
                          unsigned* slots) {
  const uint4* p = buf + threadIdx.x;
  const unsigned step = blockDim.x;
  std::uint32_t acc = 0;
  for (unsigned pass = 0; pass < passes; ++pass) {
#pragma unroll 8
    for (unsigned k = 0; k < per_thread; ++k) {
      const uint4 v = LDG ? __ldg(p + k * step) : p[k * step];
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

// One way to run a read kernel: its launch, the bytes and the checksum one launch gives.
// partial_words == 0: the kernel adds into the slots; otherwise it stores that many sums.
struct Trial {
  std::string name;
  std::function<void()> launch;
  double bytes_per_launch = 0;
  std::uint32_t want_per_launch = 0;
  std::uint64_t partial_words = 0;
};

// The checksum the last launches left: the slots' sum, or the sum of the stored partials.
Result<std::uint32_t> checksum(const Trial& t, const unsigned* sums) {
  if (t.partial_words == 0) return detail::sum_slots(sums);
  std::vector<unsigned> host(t.partial_words);
  VD_CUDA(cudaMemcpy(host.data(), sums, host.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::uint32_t sum = 0;
  for (unsigned v : host) sum += v;
  return sum;
}

// Times `launches` launches of `t` per sample and checks the slot checksum after each.
Result<std::vector<double>> timed_reads(const char* what, const Trial& t, int launches, int samples, unsigned* slots) {
  std::vector<double> seconds;
  detail::Event start, end;
  for (int i = -1; i < samples; ++i) {  // sample -1 is the warm-up
    if (auto r = detail::clear_slots(slots); !r) return make_error(r.error());
    VD_CUDA(cudaEventRecord(start.e));
    for (int l = 0; l < launches; ++l) t.launch();
    VD_CUDA(cudaGetLastError());
    VD_CUDA(cudaEventRecord(end.e));
    auto s = detail::elapsed_seconds(start.e, end.e);
    if (!s) return make_error(s.error());
    auto sum = checksum(t, slots);
    if (!sum) return make_error(sum.error());
    const std::uint32_t want = t.want_per_launch * (t.partial_words ? 1 : launches);
    if (auto ok = detail::expect_checksum(what, *sum, want); !ok) return make_error(ok.error());
    if (i >= 0) seconds.push_back(*s);
  }
  return seconds;
}

// Three samples of every trial, then `samples` of the fastest.
Result<Timed> tune_and_time(const char* what, const std::vector<Trial>& trials, int launches, int samples,
                            unsigned* slots) {
  const Trial* best = nullptr;
  double best_rate = 0;
  std::string tried;
  for (const auto& t : trials) {
    auto s = timed_reads(what, t, launches, 3, slots);
    if (!s) return make_error(s.error());
    std::sort(s->begin(), s->end());
    const double rate = t.bytes_per_launch * launches / (*s)[1];
    char rate_text[32];
    std::snprintf(rate_text, sizeof rate_text, ": %.0f", rate / 1e9);
    tried += (tried.empty() ? "" : "; ") + t.name + rate_text;
    if (rate > best_rate) best_rate = rate, best = &t;
  }
  if (!best) return make_error(std::string(what) + ": no launch shape fits the footprint");
  auto s = timed_reads(what, *best, launches, samples, slots);
  if (!s) return make_error(s.error());
  Timed out;
  out.seconds = std::move(*s);
  out.bytes_per_sample = best->bytes_per_launch * launches;
  out.config = best->name + ", " + std::to_string(launches) + " launch(es) per sample";
  out.variants = tried;
  return out;
}

Result<int> sm_count() {
  int device = 0, sms = 0;
  VD_CUDA(cudaGetDevice(&device));
  VD_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// About 1.7 ms per launch at 10 TB/s: the last wave's tail and the gap between launches weigh a
// quarter of what they do in a 4 GiB launch (30 MiB read 1.3 % faster on an H200, docs/bench.md).
constexpr std::uint64_t kL2BytesPerLaunch = 16ULL << 30;
// Room for the per-block partials of any L2 trial (a block reads 32 KiB at least), plus rounding.
constexpr std::uint64_t kL2PartialWords = kL2BytesPerLaunch / 32768 * 2;

template <int B, int U, bool CG, bool Spread = false>
void add_l2_trial(std::vector<Trial>& out, const uint4* buf, std::uint64_t count, unsigned* partials) {
  const std::uint64_t chunk = std::uint64_t{B} * U;
  const auto chunks = static_cast<unsigned>(count / chunk);
  if (chunks == 0 || count % chunk != 0) return;
  const auto per_chunk = static_cast<unsigned>(kL2BytesPerLaunch / (chunk * sizeof(uint4)));
  const unsigned reps = (per_chunk + chunks - 1) / chunks;  // about kL2BytesPerLaunch per launch
  const unsigned grid = chunks * reps;
  const std::uint64_t words = grid;
  if (words > kL2PartialWords) return;
  char name[140];
  std::snprintf(name, sizeof name, "%u blocks x %d threads, %d loads each, %llu KiB per block%s, %s", grid, B, U,
                static_cast<unsigned long long>(chunk * sizeof(uint4) / 1024),
                Spread ? " spread over the footprint" : "", CG ? "ld.global.cg" : "ld.global");
  out.push_back({name, [=] { l2_kernel<B, U, CG, Spread><<<grid, B>>>(buf, chunks, partials); },
                 static_cast<double>(grid) * static_cast<double>(chunk * sizeof(uint4)),
                 detail::affine_sum(4 * count, 1, kSeed) * reps, words});
}

template <bool LDG>
Result<bool> add_l1_trials(std::vector<Trial>& out, const uint4* buf, std::uint64_t count, unsigned* slots, int sms) {
  VD_CUDA(cudaFuncSetAttribute(l1_kernel<LDG>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  for (int block : {256, 512, 1024}) {
    if (count % block != 0) continue;
    int per_sm = 0;
    VD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, l1_kernel<LDG>, block, 0));
    const int grid = sms * per_sm;
    const auto per_thread = static_cast<unsigned>(count / block);
    // About 100 GB per launch: milliseconds at L1 speed.
    const auto passes = static_cast<unsigned>(1e11 / (static_cast<double>(grid) * count * sizeof(uint4))) + 1;
    char name[120];
    std::snprintf(name, sizeof name, "%d blocks x %d threads (%d per SM), %s, %u passes", grid, block, per_sm,
                  LDG ? "ld.global.nc" : "ld.global", passes);
    out.push_back({name, [=] { l1_kernel<LDG><<<grid, block>>>(buf, per_thread, passes, 0, slots); },
                   static_cast<double>(grid) * static_cast<double>(count * sizeof(uint4)) * passes,
                   detail::affine_sum(4 * count, 1, kSeed) * passes * static_cast<std::uint32_t>(grid)});
  }
  return true;
}

}  // namespace

Result<Timed> l2_read(std::uint64_t footprint_bytes, int samples) {
  const std::uint64_t count = footprint_bytes / sizeof(uint4);
  detail::DeviceArray<uint4> buf;
  detail::DeviceArray<unsigned> partials;
  VD_CUDA(buf.alloc(count));
  VD_CUDA(partials.alloc(kL2PartialWords));
  if (auto r = detail::fill_affine(buf.ptr, count, 1, kSeed); !r) return make_error(r.error());
  std::vector<Trial> trials;
  add_l2_trial<256, 16, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<512, 16, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<256, 32, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<256, 16, false>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<512, 16, false>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<256, 32, false>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<1024, 8, false>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<1024, 8, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<512, 8, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<1024, 4, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<128, 32, false>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<128, 32, false, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<256, 32, false, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<512, 16, false, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<1024, 8, false, true>(trials, buf.ptr, count, partials.ptr);
  add_l2_trial<1024, 8, true, true>(trials, buf.ptr, count, partials.ptr);
  return tune_and_time("l2 read", trials, 2, samples, partials.ptr);
}

Result<Timed> l1_read(std::uint64_t footprint_bytes, int samples) {
  const std::uint64_t count = footprint_bytes / sizeof(uint4);
  auto sms = sm_count();
  if (!sms) return make_error(sms.error());
  detail::DeviceArray<uint4> buf;
  detail::DeviceArray<unsigned> slots;
  VD_CUDA(buf.alloc(count));
  VD_CUDA(slots.alloc(detail::kSlots));
  if (auto r = detail::fill_affine(buf.ptr, count, 1, kSeed); !r) return make_error(r.error());
  std::vector<Trial> trials;
  if (auto r = add_l1_trials<false>(trials, buf.ptr, count, slots.ptr, *sms); !r) return make_error(r.error());
  if (auto r = add_l1_trials<true>(trials, buf.ptr, count, slots.ptr, *sms); !r) return make_error(r.error());
  return tune_and_time("l1 read", trials, 1, samples, slots.ptr);
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
  char name[120];
  std::snprintf(name, sizeof name, "%d blocks x %d threads (%d per SM), 32 KiB each, %u passes", grid, kSharedBlock,
                per_sm, passes);
  const Trial t{name, [=, p = slots.ptr] { shared_kernel<<<grid, kSharedBlock>>>(passes, 0, p); },
                static_cast<double>(grid) * static_cast<double>(bytes) * passes,
                detail::affine_sum(4 * kSharedWords, 1, kSeed) * passes * static_cast<std::uint32_t>(grid)};
  return tune_and_time("shared read", {t}, 1, samples, slots.ptr);
}

}  // namespace vramdoc::bench
