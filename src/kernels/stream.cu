// Device-memory stream kernels (read, write, copy, triad) and their tuned launcher.
// 16-byte vector accesses, U independent loads in flight per thread, a grid of exactly the
// resident blocks and an array length that is a multiple of grid x block x U (no tails).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/common.cuh"

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

// a = f(b, c) over n uint4. Grid-stride: n is a multiple of gridDim.x * blockDim.x * U (a grid
// of exactly n / (blockDim.x * U) blocks makes it one pass over U regions, as BabelStream does).
// Chunked: block i covers the contiguous chunk i of blockDim.x * U elements, one pass.
// Read leaves one partial sum per block in `partials` (a plain store: no atomics on the hot path).
template <int Op, int U, int H, bool Chunked>
__global__ void stream_kernel(uint4* __restrict__ a, const uint4* __restrict__ b, const uint4* __restrict__ c,
                              std::uint64_t n, unsigned* partials) {
  const std::uint64_t t = Chunked ? blockDim.x : static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  std::uint64_t base = Chunked ? blockIdx.x * static_cast<std::uint64_t>(blockDim.x) * U + threadIdx.x
                               : blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t end = Chunked ? base + 1 : n;
  std::uint32_t acc = 0;
  for (; base < end; base += t * U) {
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
  if constexpr (Op == static_cast<int>(StreamOp::Read)) detail::store_block_sum(partials, acc);
}

// Read only, one long launch: block k reads region k mod R of the array, I iterations of 2 x B
// uint4 each, all loads issued before any is used; region r's iteration i is at (i R + r) 2 B, so
// the resident blocks sweep one contiguous window together (the access pattern of gpu-benches'
// gpu-l2-cache). The grid is `passes` x R blocks: one launch reads the array `passes` times, tens
// of milliseconds without a launch gap; a byte comes back only after the whole array, so never
// from L2. `n` is passed as R.
template <int B, int I>
__global__ void read_regions(uint4* __restrict__, const uint4* __restrict__ b, const uint4* __restrict__,
                             std::uint64_t regions, unsigned* partials) {
  const std::uint64_t r = blockIdx.x % regions;
  uint4 v[2 * I];
#pragma unroll
  for (int i = 0; i < I; ++i) {
    const std::uint64_t at = (i * regions + r) * 2 * B + threadIdx.x;
    v[2 * i] = __ldcs(b + at);
    v[2 * i + 1] = __ldcs(b + at + B);
  }
  std::uint32_t acc = 0;
#pragma unroll
  for (int i = 0; i < 2 * I; ++i) acc += v[i].x + v[i].y + v[i].z + v[i].w;
  detail::store_block_sum(partials, acc);
}

using KernelFn = void (*)(uint4*, const uint4*, const uint4*, std::uint64_t, unsigned*);
enum class Layout { GridStride, Chunked, Memcpy, Regions };
struct Variant {
  KernelFn fn;
  int unroll;  // loads in flight per thread
  int hint;
  Layout layout;
  int block = 0;  // Regions: the block size the kernel is built for
};

// Bytes one Regions launch reads at least: about 21 ms at 4.8 TB/s.
constexpr std::uint64_t kRegionBytesPerLaunch = 96ULL << 30;

template <int Op, int H, bool Chunked>
void add_unrolls(std::vector<Variant>& out) {
  const Layout layout = Chunked ? Layout::Chunked : Layout::GridStride;
  if constexpr (!Chunked) out.push_back({stream_kernel<Op, 1, H, Chunked>, 1, H, layout});
  out.push_back({stream_kernel<Op, 2, H, Chunked>, 2, H, layout});
  out.push_back({stream_kernel<Op, 4, H, Chunked>, 4, H, layout});
  out.push_back({stream_kernel<Op, 8, H, Chunked>, 8, H, layout});
}

template <int Op>
std::vector<Variant> variants_of() {
  std::vector<Variant> out;
  add_unrolls<Op, kStreaming, false>(out);
  if constexpr (Op != static_cast<int>(StreamOp::Write)) add_unrolls<Op, kNoAllocate256, false>(out);
  add_unrolls<Op, kPlain, false>(out);
  add_unrolls<Op, kStreaming, true>(out);
  add_unrolls<Op, kPlain, true>(out);
  if constexpr (Op == static_cast<int>(StreamOp::Read)) {
    out.push_back({read_regions<512, 8>, 16, kStreaming, Layout::Regions, 512});
    out.push_back({read_regions<1024, 4>, 8, kStreaming, Layout::Regions, 1024});
    out.push_back({read_regions<256, 8>, 16, kStreaming, Layout::Regions, 256});
  }
  // The driver's own device-to-device copy (what cudaMemcpy and PyTorch's copy_ use).
  if constexpr (Op == static_cast<int>(StreamOp::Copy)) out.push_back({nullptr, 0, 0, Layout::Memcpy});
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
  std::string name;
  std::uint64_t passes = 1;   // times one launch goes over the array (Regions)
  std::uint64_t regions = 0;  // Regions: R
};

// Bytes one launch of `s` moves, all arrays.
double bytes_per_launch(const Shape& s, StreamOp op) {
  return static_cast<double>(s.n) * sizeof(uint4) * arrays_touched(op) * static_cast<double>(s.passes);
}

struct Arrays {
  uint4 *a, *b, *c;
  unsigned* partials;
};

// Seconds for `launches` back-to-back launches of one shape, between two events.
Result<double> time_shape(const Shape& s, const Arrays& x, int launches) {
  detail::Event start, end;
  VD_CUDA(cudaEventRecord(start.e));
  for (int i = 0; i < launches; ++i) {
    if (s.v.layout == Layout::Memcpy) VD_CUDA(cudaMemcpyAsync(x.a, x.b, s.n * sizeof(uint4), cudaMemcpyDeviceToDevice));
    else s.v.fn<<<s.grid, s.block>>>(x.a, x.b, x.c, s.v.layout == Layout::Regions ? s.regions : s.n, x.partials);
  }
  VD_CUDA(cudaGetLastError());
  VD_CUDA(cudaEventRecord(end.e));
  return detail::elapsed_seconds(start.e, end.e);
}

// Checks what the last launch left: the read's partial sums or the destination array.
Result<bool> verify(StreamOp op, const Shape& s, const Arrays& x) {
  if (op == StreamOp::Read) {
    std::vector<unsigned> partials(static_cast<std::size_t>(s.grid));  // one word per block
    VD_CUDA(cudaMemcpy(partials.data(), x.partials, partials.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::uint32_t sum = 0;
    for (unsigned p : partials) sum += p;
    return detail::expect_checksum("device read", sum,
                                   detail::affine_sum(4 * s.n, 1, kSeedB) * static_cast<std::uint32_t>(s.passes));
  }
  std::uint32_t mul = 1, add = kSeedB;
  if (op == StreamOp::Write) mul = 0, add = kWriteValue;
  if (op == StreamOp::Triad) mul = 4, add = kSeedB + 3 * kSeedC;
  auto bad = detail::count_mismatches(x.a, s.n, mul, add);
  if (!bad) return make_error(bad.error());
  if (*bad) return make_error("device stream: " + std::to_string(*bad) + " wrong words in the destination array");
  return true;
}

// Every launch shape worth trying for `v`: grids of the resident blocks (persistent) and of
// one pass, for three block sizes; one shape for the driver copy.
Result<std::vector<Shape>> shapes_of(const Variant& v, std::uint64_t count, int sms) {
  std::vector<Shape> out;
  if (v.layout == Layout::Memcpy) {
    out.push_back({v, 0, 0, count, "cudaMemcpyAsync device to device"});
    return out;
  }
  if (v.layout == Layout::Regions) {
    const std::uint64_t region = static_cast<std::uint64_t>(v.block) * v.unroll;  // uint4
    const std::uint64_t regions = count / region;
    if (regions == 0) return out;
    const std::uint64_t passes = kRegionBytesPerLaunch / (regions * region * sizeof(uint4)) + 1;
    if (regions * passes >= (1ULL << 31)) return out;
    char name[140];
    std::snprintf(name, sizeof name, "a region per block, %d loads each, %llu x %d threads (%llu passes in one launch)",
                  v.unroll, static_cast<unsigned long long>(regions * passes), v.block,
                  static_cast<unsigned long long>(passes));
    Shape shape{v, v.block, static_cast<int>(regions * passes), regions * region, name};
    shape.passes = passes;
    shape.regions = regions;
    out.push_back(shape);
    return out;
  }
  cudaFuncAttributes attributes{};
  VD_CUDA(cudaFuncGetAttributes(&attributes, v.fn));
  for (int block : {256, 512, 1024}) {
    // A heavily unrolled kernel may need too many registers for the largest blocks.
    if (block > attributes.maxThreadsPerBlock) continue;
    const std::uint64_t per_block = static_cast<std::uint64_t>(block) * v.unroll;
    char name[120];
    std::snprintf(name, sizeof name, "unroll %d, %s, one pass, %s, %llu x %d threads", v.unroll, kHintNames[v.hint],
                  v.layout == Layout::Chunked ? "a chunk per block" : "U strided regions",
                  static_cast<unsigned long long>(count / per_block), block);
    if (count / per_block > 0 && count / per_block < (1ULL << 31)) {
      out.push_back({v, block, static_cast<int>(count / per_block), count / per_block * per_block, name});
    }
    if (v.layout == Layout::Chunked) continue;
    int per_sm = 0;
    VD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.fn, block, 0));
    const std::uint64_t quantum = static_cast<std::uint64_t>(sms) * per_sm * per_block;
    if (per_sm == 0 || count < quantum) continue;
    std::snprintf(name, sizeof name, "unroll %d, %s, persistent grid-stride, %d x %d threads", v.unroll,
                  kHintNames[v.hint], sms * per_sm, block);
    out.push_back({v, block, sms * per_sm, count / quantum * quantum, name});
  }
  return out;
}

}  // namespace

Result<Timed> device_stream(StreamOp op, std::uint64_t stream_bytes, int samples) {
  int device = 0, sms = 0;
  VD_CUDA(cudaGetDevice(&device));
  VD_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::uint64_t count = stream_array_bytes(stream_bytes, arrays_touched(op)) / sizeof(uint4);
  detail::DeviceArray<uint4> a, b, c;
  detail::DeviceArray<unsigned> partials;
  // One word per block of the largest read grid (sized per warp: room to spare): unroll 1 over
  // the array, or a Regions launch (8 loads per thread at least, kRegionBytesPerLaunch plus one
  // pass at most).
  if (op == StreamOp::Read) {
    VD_CUDA(partials.alloc(std::max(count / 32 + 1, (kRegionBytesPerLaunch / sizeof(uint4) + count) / 8 / 32 + 64)));
  }
  if (op != StreamOp::Read) VD_CUDA(a.alloc(count));
  if (op != StreamOp::Write) {
    VD_CUDA(b.alloc(count));
    if (auto r = detail::fill_affine(b.ptr, count, 1, kSeedB); !r) return make_error(r.error());
  }
  if (op == StreamOp::Triad) {
    VD_CUDA(c.alloc(count));
    if (auto r = detail::fill_affine(c.ptr, count, 1, kSeedC); !r) return make_error(r.error());
  }
  const Arrays x{a.ptr, b.ptr, c.ptr, partials.ptr};
  const int launches = 5;

  // Tuning: every variant and launch shape, three short samples each; the fastest median wins.
  Shape best;
  double best_rate = 0;
  std::string tried;
  for (const auto& v : variants(op)) {
    auto shapes = shapes_of(v, count, sms);
    if (!shapes) return make_error(shapes.error());
    for (const auto& s : *shapes) {
      std::vector<double> rates;
      for (int i = 0; i < 3; ++i) {
        auto t = time_shape(s, x, 2);
        if (!t) return make_error(t.error());
        rates.push_back(bytes_per_launch(s, op) * 2 / *t);
      }
      std::sort(rates.begin(), rates.end());
      tried += (tried.empty() ? "" : "; ") + s.name + ": " + std::to_string(static_cast<int>(rates[1] / 1e9));
      if (rates[1] > best_rate) best_rate = rates[1], best = s;
    }
  }
  if (best_rate == 0) return make_error("device stream: no launch shape fits the array");

  Timed out;
  out.bytes_per_sample = bytes_per_launch(best, op) * launches;
  char cfg[64];
  std::snprintf(cfg, sizeof cfg, "%.2f GiB per array, ", static_cast<double>(best.n * sizeof(uint4)) / (1 << 30));
  out.config = cfg + best.name + ", " + std::to_string(launches) + " launches per sample";
  out.variants = tried;
  if (op != StreamOp::Read) VD_CUDA(cudaMemset(a.ptr, 0, best.n * sizeof(uint4)));
  for (int i = 0; i < samples; ++i) {
    auto t = time_shape(best, x, launches);
    if (!t) return make_error(t.error());
    out.seconds.push_back(*t);
    // Checked after the last sample only, so the samples run back to back.
    if (i == samples - 1) {
      if (auto ok = verify(op, best, x); !ok) return make_error(ok.error());
    }
  }
  return out;
}

}  // namespace vramdoc::bench
