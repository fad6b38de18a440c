#include <cuda_runtime.h>

#include "bench/kernels.cuh"

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

}  // namespace vramdoc::bench
