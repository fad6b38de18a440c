// Latency by pointer chase: one thread follows a random cyclic permutation, so every load
// depends on the one before and no prefetcher can guess the next line. Timed with clock64 and
// %globaltimer inside the kernel: cycles, nanoseconds and the SM clock of the same run.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/common.cuh"

namespace vramdoc::bench {

namespace {

constexpr int kSteps = 4096;  // dependent loads per timed repetition
constexpr int kSharedNodes = 8192;

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// buf[order[i] * stride] holds the address of node order[i + 1].
__global__ void link_kernel(std::uint64_t* buf, const std::uint32_t* order, std::uint64_t n, std::uint64_t stride_words) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    const std::uint64_t next = order[(i + 1) % n];
    buf[order[i] * stride_words] = reinterpret_cast<std::uint64_t>(buf + next * stride_words);
  }
}

__global__ void chase_kernel(const std::uint64_t* start, std::uint64_t warm, int reps, long long* cycles,
                             unsigned long long* ns, const std::uint64_t** end) {
  const std::uint64_t* p = start;
  for (std::uint64_t i = 0; i < warm; ++i) p = reinterpret_cast<const std::uint64_t*>(*p);
  for (int r = 0; r < reps; ++r) {
    const long long c0 = clock64();
    const std::uint64_t t0 = global_ns();
#pragma unroll 16
    for (int i = 0; i < kSteps; ++i) p = reinterpret_cast<const std::uint64_t*>(*p);
    // The stop reads do not wait for the last load: an error of 1 in kSteps, below the noise.
    const long long c1 = clock64();
    const std::uint64_t t1 = global_ns();
    cycles[r] = c1 - c0;
    ns[r] = t1 - t0;
  }
  *end = p;
}

__global__ void shared_chase_kernel(const std::uint32_t* next, int reps, long long* cycles, unsigned long long* ns,
                                    std::uint32_t* end) {
  __shared__ std::uint32_t s[kSharedNodes];
  for (int i = 0; i < kSharedNodes; ++i) s[i] = next[i];
  std::uint32_t p = 0;
  for (int i = 0; i < kSharedNodes; ++i) p = s[p];
  for (int r = 0; r < reps; ++r) {
    const long long c0 = clock64();
    const std::uint64_t t0 = global_ns();
#pragma unroll 16
    for (int i = 0; i < kSteps; ++i) p = s[p];
    const long long c1 = clock64();
    const std::uint64_t t1 = global_ns();
    cycles[r] = c1 - c0;
    ns[r] = t1 - t0;
  }
  *end = p;
}

// A random single cycle through n nodes, starting at node 0: order[i] is the i-th node visited.
std::vector<std::uint32_t> random_cycle(std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin() + 1, order.end(), rng);
  return order;
}

// Medians of the per-repetition timings, per load.
Result<Chase> summarise(const long long* dev_cycles, const unsigned long long* dev_ns, int reps) {
  std::vector<long long> c(reps);
  std::vector<unsigned long long> t(reps);
  VD_CUDA(cudaMemcpy(c.data(), dev_cycles, reps * sizeof(long long), cudaMemcpyDeviceToHost));
  VD_CUDA(cudaMemcpy(t.data(), dev_ns, reps * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  double total_c = 0, total_t = 0;
  for (int r = 0; r < reps; ++r) total_c += static_cast<double>(c[r]), total_t += static_cast<double>(t[r]);
  std::sort(c.begin(), c.end());
  std::sort(t.begin(), t.end());
  Chase out;
  out.cycles = static_cast<double>(c[reps / 2]) / kSteps;
  out.ns = static_cast<double>(t[reps / 2]) / kSteps;
  out.sm_mhz = total_t > 0 ? total_c / total_t * 1e3 : 0;
  return out;
}

}  // namespace

Result<Chase> chase_latency(std::uint64_t footprint_bytes, int reps) {
  constexpr std::uint64_t kMaxNodes = std::uint64_t{1} << 22;
  std::uint64_t stride = 64;
  while (footprint_bytes / stride > kMaxNodes) stride *= 2;
  const std::uint64_t n = footprint_bytes / stride;
  if (n < 2) return make_error("latency: footprint under two nodes");
  const auto order = random_cycle(n, 0x5eed + footprint_bytes);
  detail::DeviceArray<std::uint64_t> buf;
  detail::DeviceArray<std::uint32_t> dev_order;
  detail::DeviceArray<long long> cycles;
  detail::DeviceArray<unsigned long long> ns;
  detail::DeviceArray<const std::uint64_t*> end;
  VD_CUDA(buf.alloc(n * stride / 8));
  VD_CUDA(dev_order.alloc(n));
  VD_CUDA(cycles.alloc(reps));
  VD_CUDA(ns.alloc(reps));
  VD_CUDA(end.alloc(1));
  VD_CUDA(cudaMemcpy(dev_order.ptr, order.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  link_kernel<<<1024, 256>>>(buf.ptr, dev_order.ptr, n, stride / 8);
  VD_CUDA(cudaGetLastError());
  // Warm-up: one full round where it is short (caches and TLB filled), a fixed run where not.
  const std::uint64_t warm = n <= (std::uint64_t{1} << 20) ? n : (std::uint64_t{1} << 16);
  chase_kernel<<<1, 1>>>(buf.ptr, warm, reps, cycles.ptr, ns.ptr, end.ptr);
  VD_CUDA(cudaGetLastError());
  const std::uint64_t* host_end = nullptr;
  VD_CUDA(cudaMemcpy(&host_end, end.ptr, sizeof host_end, cudaMemcpyDeviceToHost));
  const std::uint64_t steps = warm + static_cast<std::uint64_t>(reps) * kSteps;
  if (host_end != buf.ptr + order[steps % n] * (stride / 8)) {
    return make_error("latency: the chase ended on the wrong node: the kernel or the GPU is faulty");
  }
  return summarise(cycles.ptr, ns.ptr, reps);
}

Result<Chase> shared_latency(int reps) {
  const auto order = random_cycle(kSharedNodes, 0x5ead);
  std::vector<std::uint32_t> next(kSharedNodes);
  for (int i = 0; i < kSharedNodes; ++i) next[order[i]] = order[(i + 1) % kSharedNodes];
  detail::DeviceArray<std::uint32_t> dev_next, end;
  detail::DeviceArray<long long> cycles;
  detail::DeviceArray<unsigned long long> ns;
  VD_CUDA(dev_next.alloc(kSharedNodes));
  VD_CUDA(end.alloc(1));
  VD_CUDA(cycles.alloc(reps));
  VD_CUDA(ns.alloc(reps));
  VD_CUDA(cudaMemcpy(dev_next.ptr, next.data(), sizeof(std::uint32_t) * kSharedNodes, cudaMemcpyHostToDevice));
  shared_chase_kernel<<<1, 1>>>(dev_next.ptr, reps, cycles.ptr, ns.ptr, end.ptr);
  VD_CUDA(cudaGetLastError());
  std::uint32_t host_end = 0;
  VD_CUDA(cudaMemcpy(&host_end, end.ptr, sizeof host_end, cudaMemcpyDeviceToHost));
  const std::uint64_t steps = kSharedNodes + static_cast<std::uint64_t>(reps) * kSteps;
  if (host_end != order[steps % kSharedNodes]) return make_error("shared latency: the chase ended on the wrong node");
  return summarise(cycles.ptr, ns.ptr, reps);
}

}  // namespace vramdoc::bench
