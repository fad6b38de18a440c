// A CUDA "extension" (loaded by accounting_jobs.py ext_native through ctypes) that keeps a scratch
// buffer per call and never frees it: raw cudaMalloc, outside PyTorch's allocator (issue 29, point
// 2). cudaMalloc(&typed_pointer, n) is cuda_runtime.h's inline template: under --trace the leak's
// frame must be make_scratch's line here, not the header's. Also keeps a pinned host buffer per
// call (cudaMallocHost), which the tracer records as its own kind. Built with
//   nvcc -shared -Xcompiler -fPIC -g -O1 -cudart static -o libscratch_ext.so scratch_ext.cu
#include <cuda_runtime.h>

#include <cstddef>

extern "C" __attribute__((noinline)) int make_scratch(std::size_t bytes) {
  float* scratch = nullptr;
  if (cudaMalloc(&scratch, bytes) != cudaSuccess) return 1;  // the leak: never freed
  return 0;
}

extern "C" __attribute__((noinline)) int make_pinned(std::size_t bytes) {
  void* host = nullptr;
  if (cudaMallocHost(&host, bytes) != cudaSuccess) return 1;  // pinned, never freed
  return 0;
}
