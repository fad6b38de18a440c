#include <cstdio>
#include <cstdlib>

#include "kernels/common.cuh"

namespace vramdoc::bench::detail {

namespace {

__global__ void fill_affine_kernel(uint4* a, std::uint64_t count, std::uint32_t mul, std::uint32_t add) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const auto w = static_cast<std::uint32_t>(4 * i);
    a[i] = make_uint4(mul * w + add, mul * (w + 1) + add, mul * (w + 2) + add, mul * (w + 3) + add);
  }
}

__global__ void mismatch_kernel(const uint4* a, std::uint64_t count, std::uint32_t mul, std::uint32_t add,
                                unsigned long long* bad) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const auto w = static_cast<std::uint32_t>(4 * i);
    const uint4 v = a[i];
    local += (v.x != mul * w + add) + (v.y != mul * (w + 1) + add) + (v.z != mul * (w + 2) + add) +
             (v.w != mul * (w + 3) + add);
  }
  if (local) atomicAdd(bad, local);
}

__global__ void spin_kernel(std::uint64_t ns) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

HostBuffer::~HostBuffer() {
  if (!ptr) return;
  if (pinned) cudaFreeHost(ptr);
  else std::free(ptr);
}

cudaError_t HostBuffer::alloc(std::size_t bytes, bool want_pinned) {
  pinned = want_pinned;
  if (pinned) return cudaMallocHost(&ptr, bytes);
  ptr = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  return ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

Result<bool> fill_affine(uint4* a, std::uint64_t count, std::uint32_t mul, std::uint32_t add, cudaStream_t stream) {
  fill_affine_kernel<<<2048, 256, 0, stream>>>(a, count, mul, add);
  VD_CUDA(cudaGetLastError());
  return true;
}

Result<std::uint64_t> count_mismatches(const uint4* a, std::uint64_t count, std::uint32_t mul, std::uint32_t add) {
  DeviceArray<unsigned long long> bad;
  VD_CUDA(bad.alloc(1));
  VD_CUDA(cudaMemset(bad.ptr, 0, sizeof(unsigned long long)));
  mismatch_kernel<<<2048, 256>>>(a, count, mul, add, bad.ptr);
  VD_CUDA(cudaGetLastError());
  unsigned long long host = 0;
  VD_CUDA(cudaMemcpy(&host, bad.ptr, sizeof host, cudaMemcpyDeviceToHost));
  return static_cast<std::uint64_t>(host);
}

Result<bool> clear_slots(unsigned* slots, cudaStream_t stream) {
  VD_CUDA(cudaMemsetAsync(slots, 0, kSlots * sizeof(unsigned), stream));
  return true;
}

Result<std::uint32_t> sum_slots(const unsigned* slots) {
  unsigned host[kSlots];
  VD_CUDA(cudaMemcpy(host, slots, sizeof host, cudaMemcpyDeviceToHost));
  std::uint32_t sum = 0;
  for (unsigned v : host) sum += v;
  return sum;
}

Result<bool> spin_gate(cudaStream_t stream, std::uint64_t ns) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
  VD_CUDA(cudaGetLastError());
  return true;
}

Result<bool> expect_checksum(const char* what, std::uint32_t got, std::uint32_t want) {
  if (got == want) return true;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: wrong result (checksum 0x%08x, expected 0x%08x): the kernel or the GPU is faulty",
                what, got, want);
  return make_error(buf);
}

Result<double> elapsed_seconds(cudaEvent_t start, cudaEvent_t end) {
  VD_CUDA(cudaEventSynchronize(end));
  float ms = 0;
  VD_CUDA(cudaEventElapsedTime(&ms, start, end));
  return static_cast<double>(ms) / 1e3;
}

}  // namespace vramdoc::bench::detail

namespace vramdoc::bench {

// The runtime's view of the devices (kernels.cuh).
int cuda_device_count(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = cudaGetErrorString(err);
    return -1;
  }
  return count;
}

Result<DeviceProps> device_props(int device) {
  DeviceProps p;
  VD_CUDA(cudaGetDeviceCount(&p.device_count));
  VD_CUDA(cudaSetDevice(device));
  cudaDeviceProp prop{};
  VD_CUDA(cudaGetDeviceProperties(&prop, device));
  p.name = prop.name;
  p.sm_count = prop.multiProcessorCount;
  p.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  // Unified L1 + shared storage per SM: the shared maximum plus the 1 KiB the driver reserves
  // per block is close; Hopper and Ampere have 256 KiB / 192 KiB of it.
  p.l1_bytes = static_cast<std::uint64_t>(prop.sharedMemPerMultiprocessor) + 28 * 1024;
  int mem_khz = 0, bus_bits = 0;
  VD_CUDA(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
  VD_CUDA(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  p.peak_bandwidth_bytes_per_s = 2.0 * mem_khz * 1e3 * bus_bits / 8;
  p.managed_memory = prop.concurrentManagedAccess != 0;
  std::size_t free_bytes = 0, total_bytes = 0;
  VD_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  p.free_bytes = free_bytes;
  return p;
}

}  // namespace vramdoc::bench
