// A program with planted device-memory leaks at three distinct call sites, and freed
// allocations of every runtime kind (plain, pitched, managed, stream-ordered), for the tracer
// test (trace_planted_leak.sh) to compare with compute-sanitizer --leak-check full.
// Built with nvcc's default, the CUDA runtime linked statically (an LD_PRELOAD hook misses it).
// Argument "hang": after the leaks, sleep until killed (the periodic-flush test).
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));          \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

// Leak 1: three 1 MiB buffers from one call site.
__attribute__((noinline)) int leak_site_a() {
  for (int i = 0; i < 3; ++i) {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 1 << 20));
  }
  return 0;
}

// Leak 2: one 5 MiB buffer.
__attribute__((noinline)) int leak_site_b() {
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 5 << 20));
  return 0;
}

// Leak 3: 3 MiB, one level deeper.
__attribute__((noinline)) int leak_site_c_inner() {
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 3 << 20));
  return 0;
}
__attribute__((noinline)) int leak_site_c() { return leak_site_c_inner(); }

// Freed allocations of every kind: none of these may show up as a leak.
__attribute__((noinline)) int freed_allocations() {
  for (int i = 0; i < 10; ++i) {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, (i + 1) << 16));
    CHECK(cudaFree(p));
  }
  void* pitched = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&pitched, &pitch, 1000, 100));
  CHECK(cudaFree(pitched));
  void* managed = nullptr;
  CHECK(cudaMallocManaged(&managed, 1 << 20));
  CHECK(cudaFree(managed));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  void* async = nullptr;
  CHECK(cudaMallocAsync(&async, 2 << 20, stream));
  CHECK(cudaMemsetAsync(async, 0, 2 << 20, stream));
  CHECK(cudaFreeAsync(async, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}

int main(int argc, char** argv) {
  CHECK(cudaFree(nullptr));  // create the context
  if (freed_allocations() || leak_site_a() || leak_site_b() || leak_site_c()) return 1;
  std::printf("planted_leak: 5 leaked allocations at 3 call sites: 3 x 1 MiB, 5 MiB, 3 MiB\n");
  std::fflush(stdout);
  if (argc > 1 && std::strcmp(argv[1], "hang") == 0)
    for (;;) pause();
  // compute-sanitizer reports leaks when the context is destroyed.
  CHECK(cudaDeviceReset());
  return 0;
}
