// Round 3: region-per-block kernels (each block owns a region, I iterations of 2 x blockDim
// elements, all loads issued before use; many blocks, one pass), element size 8 or 16 bytes,
// for read and copy; against the one-pass strided kernel and cudaMemcpy on the same machine.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
typedef unsigned long long u64;

template <int U>
__global__ void read_k(const uint4* __restrict__ b, u64 n, unsigned* out) {
  const u64 t = (u64)gridDim.x * blockDim.x;
  u64 base = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; base < n; base += t * U) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(b + base + u * t);
#pragma unroll
    for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}
template <int U>
__global__ void copy_k(uint4* __restrict__ a, const uint4* __restrict__ b, u64 n) {
  const u64 t = (u64)gridDim.x * blockDim.x;
  for (u64 base = blockIdx.x * (u64)blockDim.x + threadIdx.x; base < n; base += t * U) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = b[base + u * t];
#pragma unroll
    for (int u = 0; u < U; ++u) a[base + u * t] = v[u];
  }
}

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x + v.w; }
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x + v.y; }
__device__ __forceinline__ unsigned fold(double v) { return (unsigned)__double2loint(v); }

// Region-per-block: block reads region r = blockIdx % R of the footprint; iteration i covers
// 2 x blockDim elements at ((i * R + r) * 2 * blockDim) (so the resident blocks sweep one
// contiguous window together).
template <class T, int I>
__global__ void read_region(const T* __restrict__ b, unsigned R, unsigned* out) {
  const unsigned r = blockIdx.x % R;
  T v[2 * I];
#pragma unroll
  for (int i = 0; i < I; ++i) {
    u64 idx = ((u64)i * R + r) * 2 * blockDim.x + threadIdx.x;
    v[2 * i] = b[idx];
    v[2 * i + 1] = b[idx + blockDim.x];
  }
  unsigned acc = 0;
#pragma unroll
  for (int i = 0; i < 2 * I; ++i) acc += fold(v[i]);
  if (acc == 0x12345678u) out[0] = acc;
}
template <class T, int I>
__global__ void copy_region(T* __restrict__ a, const T* __restrict__ b, unsigned R) {
  const unsigned r = blockIdx.x % R;
  T v[2 * I];
#pragma unroll
  for (int i = 0; i < I; ++i) {
    u64 idx = ((u64)i * R + r) * 2 * blockDim.x + threadIdx.x;
    v[2 * i] = b[idx];
    v[2 * i + 1] = b[idx + blockDim.x];
  }
#pragma unroll
  for (int i = 0; i < I; ++i) {
    u64 idx = ((u64)i * R + r) * 2 * blockDim.x + threadIdx.x;
    a[idx] = v[2 * i];
    a[idx + blockDim.x] = v[2 * i + 1];
  }
}

struct Timer {
  cudaEvent_t a, b;
  Timer() { cudaEventCreate(&a); cudaEventCreate(&b); }
  void start() { cudaEventRecord(a); }
  double stop() { cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); return ms / 1e3; }
};
template <class F> double med(int reps, F f) { std::vector<double> v; for (int i = 0; i < reps; ++i) v.push_back(f()); std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
__global__ void fill(uint4* p, u64 n) { for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) p[i] = make_uint4((unsigned)i, 1, 2, 3); }

template <class T, int I>
void region_read(const char* name, const void* B, u64 footprint, int block, unsigned* out) {
  Timer tm;
  const u64 per_block = (u64)I * 2 * block * sizeof(T);
  const unsigned R = (unsigned)(footprint / per_block);
  const int blocks = (int)((8ull << 30) / per_block);  // 8 GiB per launch
  double t = med(7, [&] { tm.start(); read_region<T, I><<<blocks, block>>>((const T*)B, R, out); return tm.stop(); });
  CK(cudaGetLastError());
  printf("read region %-7s I=%2d block %4d, %5llu MiB footprint: %.1f GB/s\n", name, I, block, footprint >> 20,
         (double)blocks * per_block / t / 1e9);
}
template <class T, int I>
void region_copy(const char* name, void* A, const void* B, u64 footprint, int block) {
  Timer tm;
  const u64 per_block = (u64)I * 2 * block * sizeof(T);
  const unsigned R = (unsigned)(footprint / per_block);
  double t = med(7, [&] { tm.start(); for (int l = 0; l < 3; ++l) copy_region<T, I><<<R, block>>>((T*)A, (const T*)B, R); return tm.stop(); });
  CK(cudaGetLastError());
  printf("copy region %-7s I=%2d block %4d, %5llu MiB per array: %.1f GB/s\n", name, I, block, footprint >> 20,
         3.0 * 2 * R * per_block / t / 1e9);
}

int main() {
  const u64 GiB = 1ull << 30, MiB = 1ull << 20, big = 4 * GiB;
  uint4 *A, *B; unsigned* out;
  CK(cudaMalloc(&A, big)); CK(cudaMalloc(&B, big)); CK(cudaMalloc(&out, 64));
  fill<<<4096, 256>>>(A, big / 16); fill<<<4096, 256>>>(B, big / 16); CK(cudaDeviceSynchronize());
  Timer tm;
  for (u64 f : {2 * GiB, 4 * GiB}) {
    u64 n = f / 16; u64 per = 1024 * 8; n = n / per * per;
    double t = med(7, [&] { tm.start(); for (int l = 0; l < 5; ++l) read_k<8><<<(int)(n / per), 1024>>>(B, n, out); return tm.stop(); });
    printf("read one-pass U8 1024, %llu MiB: %.1f GB/s\n", f >> 20, 5.0 * n * 16 / t / 1e9);
  }
  for (u64 f : {192 * MiB, 1 * GiB, 4 * GiB}) {
    region_read<double, 32>("double", B, f, 1024, out);
    region_read<double, 16>("double", B, f, 1024, out);
    region_read<uint2, 16>("uint2", B, f, 1024, out);
    region_read<uint4, 8>("uint4", B, f, 512, out);
    region_read<uint4, 4>("uint4", B, f, 1024, out);
    region_read<uint4, 8>("uint4", B, f, 1024, out);
  }
  for (u64 f : {1 * GiB, 2 * GiB}) {
    u64 n = f / 16;
    double t = med(7, [&] { tm.start(); for (int l = 0; l < 3; ++l) copy_k<1><<<(int)(n / 256), 256>>>(A, B, n); return tm.stop(); });
    double t2 = med(7, [&] { tm.start(); for (int l = 0; l < 3; ++l) cudaMemcpyAsync(A, B, f, cudaMemcpyDeviceToDevice); return tm.stop(); });
    printf("copy one-pass u1 256, %llu MiB: %.1f GB/s; memcpy %.1f GB/s\n", f >> 20, 6.0 * f / t / 1e9, 6.0 * f / t2 / 1e9);
    region_copy<double, 8>("double", A, B, f, 1024);
    region_copy<double, 4>("double", A, B, f, 1024);
    region_copy<uint2, 4>("uint2", A, B, f, 512);
    region_copy<uint4, 2>("uint4", A, B, f, 512);
    region_copy<uint4, 4>("uint4", A, B, f, 256);
    region_copy<uint4, 1>("uint4", A, B, f, 256);
    region_copy<uint4, 1>("uint4", A, B, f, 1024);
    region_copy<uint2, 1>("uint2", A, B, f, 1024);
  }
  return 0;
}
