// GPU tests: holds 1 GiB of device memory for 15 s so the NVML process list has a known entry.
#include <cstdio>
#include <unistd.h>
#include <cuda_runtime.h>
int main() {
  void* p = nullptr;
  if (cudaMalloc(&p, 1ull << 30) != cudaSuccess) { std::puts("cudaMalloc failed"); return 1; }
  cudaMemset(p, 1, 1ull << 30);
  cudaDeviceSynchronize();
  std::printf("holding 1 GiB, pid %d\n", getpid());
  std::fflush(stdout);
  sleep(15);
  return 0;
}
