// Device-memory stream kernels (read, write, copy, triad) and their tuned launcher.
// 16-byte vector accesses, U independent loads in flight per thread, a grid of exactly the
// resident blocks and an array length that is a multiple of grid x block x U (no tails).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/common.cuh"

namespace vramdoc::bench {

namespace {

constexpr std::uint32_t kSeedB = 0x1234u, kSeedC = 0x777u, kWriteValue = 0x5a5a5a5au;
enum Hint { kStreaming = 0, kNoAllocate256 = 1, kPlain = 2 };
const char* const kHintNames[] = {"ld.cs/st.cs", "ld.nc.L2::256B/st.cs", "ld/st"};

template <int H>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (H == kStreaming) {
    return __ldcs(p);
  } else if constexpr (H == kNoAllocate256) {
#if __CUDA_ARCH__ >= 800  // the L2::256B prefetch hint exists from sm_80 (PTX ISA 7.4)
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
#else
    return __ldg(p);
#endif
  } else {
    return *p;
  }
}

template <int H>
__device__ __forceinline__ void store(uint4* p, uint4 v) {
  if constexpr (H == kPlain) *p = v;
  else __stcs(p, v);
}

// a = f(b, c) over n uint4; n is a multiple of gridDim.x * blockDim.x * U.
template <int Op, int U, int H>
__global__ void stream_kernel(uint4* __restrict__ a, const uint4* __restrict__ b, const uint4* __restrict__ c,
                              std::uint64_t n, unsigned* slots) {
  const std::uint64_t t = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  std::uint32_t acc = 0;
  for (std::uint64_t base = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; base < n;
       base += t * U) {
    if constexpr (Op == static_cast<int>(StreamOp::Read)) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = load<H>(b + base + u * t);
#pragma unroll
      for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    } else if constexpr (Op == static_cast<int>(StreamOp::Write)) {
#pragma unroll
      for (int u = 0; u < U; ++u) store<H>(a + base + u * t, make_uint4(kWriteValue, kWriteValue, kWriteValue, kWriteValue));
    } else if constexpr (Op == static_cast<int>(StreamOp::Copy)) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = load<H>(b + base + u * t);
#pragma unroll
      for (int u = 0; u < U; ++u) store<H>(a + base + u * t, v[u]);
    } else {
      uint4 x[U], y[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        x[u] = load<H>(b + base + u * t);
        y[u] = load<H>(c + base + u * t);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        store<H>(a + base + u * t, make_uint4(x[u].x + 3 * y[u].x, x[u].y + 3 * y[u].y, x[u].z + 3 * y[u].z,
                                              x[u].w + 3 * y[u].w));
      }
    }
  }
  if constexpr (Op == static_cast<int>(StreamOp::Read)) detail::add_to_slots(slots, acc);
}

using KernelFn = void (*)(uint4*, const uint4*, const uint4*, std::uint64_t, unsigned*);
struct Variant {
  KernelFn fn;
  int unroll;
  int hint;
};

template <int Op, int H>
void add_hint(std::vector<Variant>& out) {
  out.push_back({stream_kernel<Op, 2, H>, 2, H});
  out.push_back({stream_kernel<Op, 4, H>, 4, H});
  out.push_back({stream_kernel<Op, 8, H>, 8, H});
}

template <int Op>
std::vector<Variant> variants_of() {
  std::vector<Variant> out;
  add_hint<Op, kStreaming>(out);
  if constexpr (Op != static_cast<int>(StreamOp::Write)) add_hint<Op, kNoAllocate256>(out);
  add_hint<Op, kPlain>(out);
  return out;
}

std::vector<Variant> variants(StreamOp op) {
  switch (op) {
    case StreamOp::Read: return variants_of<static_cast<int>(StreamOp::Read)>();
    case StreamOp::Write: return variants_of<static_cast<int>(StreamOp::Write)>();
    case StreamOp::Copy: return variants_of<static_cast<int>(StreamOp::Copy)>();
    default: return variants_of<static_cast<int>(StreamOp::Triad)>();
  }
}

int arrays_touched(StreamOp op) {
  return op == StreamOp::Triad ? 3 : op == StreamOp::Copy ? 2 : 1;
}

struct Shape {
  Variant v;
  int block = 0;
  int grid = 0;
  std::uint64_t n = 0;  // uint4 per array
};

struct Arrays {
  uint4 *a, *b, *c;
  unsigned* slots;
};

// Seconds for `launches` back-to-back launches of one shape, between two events.
Result<double> time_shape(const Shape& s, const Arrays& x, int launches) {
  detail::Event start, end;
  VD_CUDA(cudaEventRecord(start.e));
  for (int i = 0; i < launches; ++i) s.v.fn<<<s.grid, s.block>>>(x.a, x.b, x.c, s.n, x.slots);
  VD_CUDA(cudaGetLastError());
  VD_CUDA(cudaEventRecord(end.e));
  return detail::elapsed_seconds(start.e, end.e);
}

// Checks what the last launches left: the read checksum or the destination array.
Result<bool> verify(StreamOp op, const Shape& s, const Arrays& x, int launches) {
  if (op == StreamOp::Read) {
    auto sum = detail::sum_slots(x.slots);
    if (!sum) return make_error(sum.error());
    return detail::expect_checksum("device read", *sum, detail::affine_sum(4 * s.n, 1, kSeedB) * launches);
  }
  std::uint32_t mul = 1, add = kSeedB;
  if (op == StreamOp::Write) mul = 0, add = kWriteValue;
  if (op == StreamOp::Triad) mul = 4, add = kSeedB + 3 * kSeedC;
  auto bad = detail::count_mismatches(x.a, s.n, mul, add);
  if (!bad) return make_error(bad.error());
  if (*bad) return make_error("device stream: " + std::to_string(*bad) + " wrong words in the destination array");
  return true;
}

}  // namespace

Result<Timed> device_stream(StreamOp op, std::uint64_t bytes_per_array, int samples) {
  int device = 0, sms = 0;
  VD_CUDA(cudaGetDevice(&device));
  VD_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::uint64_t count = bytes_per_array / sizeof(uint4);
  detail::DeviceArray<uint4> a, b, c;
  detail::DeviceArray<unsigned> slots;
  VD_CUDA(slots.alloc(detail::kSlots));
  if (op != StreamOp::Read) VD_CUDA(a.alloc(count));
  if (op != StreamOp::Write) {
    VD_CUDA(b.alloc(count));
    if (auto r = detail::fill_affine(b.ptr, count, 1, kSeedB); !r) return make_error(r.error());
  }
  if (op == StreamOp::Triad) {
    VD_CUDA(c.alloc(count));
    if (auto r = detail::fill_affine(c.ptr, count, 1, kSeedC); !r) return make_error(r.error());
  }
  const Arrays x{a.ptr, b.ptr, c.ptr, slots.ptr};
  const int launches = 5;

  // Tuning: every variant and block size, three short samples each; the fastest rate wins.
  Shape best;
  double best_rate = 0;
  std::string tried;
  for (const auto& v : variants(op)) {
    for (int block : {256, 512, 1024}) {
      int per_sm = 0;
      VD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.fn, block, 0));
      if (per_sm == 0) continue;
      Shape s{v, block, sms * per_sm, 0};
      const std::uint64_t quantum = static_cast<std::uint64_t>(s.grid) * block * v.unroll;
      s.n = count / quantum * quantum;
      if (s.n == 0) continue;
      std::vector<double> rates;
      for (int i = 0; i < 3; ++i) {
        auto t = time_shape(s, x, 2);
        if (!t) return make_error(t.error());
        rates.push_back(static_cast<double>(s.n) / *t);
      }
      std::sort(rates.begin(), rates.end());
      char line[96];
      std::snprintf(line, sizeof line, "%su%d %s %d: %.0f", tried.empty() ? "" : "; ", v.unroll, kHintNames[v.hint],
                    block, rates[1] * sizeof(uint4) * arrays_touched(op) * 2 / 1e9);
      tried += line;
      if (rates[1] > best_rate) best_rate = rates[1], best = s;
    }
  }
  if (best_rate == 0) return make_error("device stream: no launch shape fits the array");

  Timed out;
  out.bytes_per_sample = static_cast<double>(best.n) * sizeof(uint4) * arrays_touched(op) * launches;
  char cfg[200];
  std::snprintf(cfg, sizeof cfg, "%.2f GiB per array, unroll %d, %s, %d x %d threads, %d launches per sample",
                static_cast<double>(best.n * sizeof(uint4)) / (1 << 30), best.v.unroll, kHintNames[best.v.hint],
                best.grid, best.block, launches);
  out.config = cfg;
  out.variants = tried;
  if (op != StreamOp::Read) VD_CUDA(cudaMemset(a.ptr, 0, best.n * sizeof(uint4)));
  for (int i = 0; i < samples; ++i) {
    if (auto r = detail::clear_slots(slots.ptr); !r) return make_error(r.error());
    auto t = time_shape(best, x, launches);
    if (!t) return make_error(t.error());
    out.seconds.push_back(*t);
    if (op == StreamOp::Read || i == samples - 1) {
      if (auto ok = verify(op, best, x, launches); !ok) return make_error(ok.error());
    }
  }
  return out;
}

}  // namespace vramdoc::bench
