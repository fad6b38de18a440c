#include <cuda_runtime.h>

#include "bench/common.cuh"

namespace vramdoc::bench {

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
  p.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
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
  p.total_bytes = total_bytes;
  return p;
}

}  // namespace vramdoc::bench
