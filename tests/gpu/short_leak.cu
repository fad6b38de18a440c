// A 0.4 s CUDA program that leaks 40 allocations, 70 MiB in all (issue 15, point 3): run under
// `vramdoc run --trace` its verdict must agree with the tracer's "alive at exit", and without the
// trace a run this short is inconclusive. Built with nvcc's defaults.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>

__attribute__((noinline)) void* keep_buffer(size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
  return p;
}

int main() {
  if (cudaFree(nullptr) != cudaSuccess) {  // the context, before the clock starts
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  const size_t bytes = (70u << 20) / 40;  // 1.75 MiB each
  for (int i = 0; i < 40; ++i) {
    if (!keep_buffer(bytes)) {
      std::fprintf(stderr, "cudaMalloc failed at %d\n", i);
      return 1;
    }
    usleep(7000);
  }
  std::printf("short_leak: 40 allocations of %zu bytes kept\n", bytes);
  return 0;
}
