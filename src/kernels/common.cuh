// Helpers shared by the launchers (CUDA side only): error mapping, RAII owners, pattern fill
// and check, result slots, the spin gate. Not for plain C++ files: they use kernels.cuh.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/kernels.cuh"
#include "core/bench/plan.hpp"

namespace vramdoc::bench::detail {

// "cudaMalloc(...): out of memory" from the failed call's text and its error.
inline Error cuda_error(const char* call, cudaError_t err) {
  return make_error(std::string(call) + ": " + cudaGetErrorString(err));
}

// Returns the CUDA error of `call` as a Result error from the enclosing launcher.
#define VD_CUDA(call)                                                       \
  do {                                                                      \
    cudaError_t vd_err_ = (call);                                           \
    if (vd_err_ != cudaSuccess) return ::vramdoc::bench::detail::cuda_error(#call, vd_err_); \
  } while (0)

// Owns a device allocation (cudaMalloc), freed on scope exit.
template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { if (ptr) cudaFree(ptr); }
  cudaError_t alloc(std::size_t count) { return cudaMalloc(&ptr, count * sizeof(T)); }
};

// Owns pinned (cudaMallocHost) or pageable host memory.
struct HostBuffer {
  void* ptr = nullptr;
  bool pinned = false;
  HostBuffer() = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();
  cudaError_t alloc(std::size_t bytes, bool want_pinned);
};

// Owns a CUDA event.
struct Event {
  cudaEvent_t e = nullptr;
  Event() { cudaEventCreate(&e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { if (e) cudaEventDestroy(e); }
};

// Owns a non-blocking CUDA stream.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { if (s) cudaStreamDestroy(s); }
};

// Result slots: kernels add their checksums into kSlots words spread by warp, never one hot word.
constexpr int kSlots = 1024;

// The sum of `value` over the 32 lanes of the warp (all lanes must call it).
__device__ inline unsigned warp_sum(unsigned value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// Sums `value` over the block and stores it in partials[blockIdx.x] (all threads must call it).
// One word per block: per-warp stores from a many-block read cost 0.8 % of its bandwidth on an
// H200 (the written lines go back to DRAM between the reads; exp5, docs/bench-h200.md).
__device__ inline void store_block_sum(unsigned* partials, unsigned value) {
  __shared__ unsigned per_warp[32];
  value = warp_sum(value);
  if ((threadIdx.x & 31) == 0) per_warp[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x < 32) {
    value = warp_sum(threadIdx.x < (blockDim.x + 31) / 32 ? per_warp[threadIdx.x] : 0u);
    if (threadIdx.x == 0) partials[blockIdx.x] = value;
  }
}

// Sums `value` over the warp and adds it to this warp's slot (all 32 lanes must call it).
__device__ inline void add_to_slots(unsigned* slots, unsigned value) {
  value = warp_sum(value);
  if ((threadIdx.x & 31) == 0) {
    const unsigned warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    atomicAdd(&slots[warp % kSlots], value);
  }
}

// Sum over words w in [0, words) of (mul * w + add), modulo 2^32: what a reading kernel must get.
inline std::uint32_t affine_sum(std::uint64_t words, std::uint32_t mul, std::uint32_t add) {
  return affine_word_sum(words, mul, add);
}
// Writes word w = mul * w + add into `a` (`count` uint4 = 4 x count words) on `stream`.
Result<bool> fill_affine(uint4* a, std::uint64_t count, std::uint32_t mul, std::uint32_t add, cudaStream_t stream = 0);
// Number of words of `a` that differ from mul * w + add (synchronises).
Result<std::uint64_t> count_mismatches(const uint4* a, std::uint64_t count, std::uint32_t mul, std::uint32_t add);
// Zeroes the slots (on `stream`).
Result<bool> clear_slots(unsigned* slots, cudaStream_t stream = 0);
// The sum of the slots modulo 2^32 (synchronises).
Result<std::uint32_t> sum_slots(const unsigned* slots);
// Holds `stream` for about `ns` nanoseconds: copies queued behind it start back to back.
Result<bool> spin_gate(cudaStream_t stream, std::uint64_t ns);
// An error naming `what` when `got` != `want`.
Result<bool> expect_checksum(const char* what, std::uint32_t got, std::uint32_t want);
// Seconds between two recorded events (synchronises on `end`).
Result<double> elapsed_seconds(cudaEvent_t start, cudaEvent_t end);

}  // namespace vramdoc::bench::detail
