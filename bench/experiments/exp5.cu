// Round 5: which difference makes exp4's region read (4727) faster than the tuner's (4691)?
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <unistd.h>
#include <cuda_runtime.h>
typedef unsigned long long u64;
__device__ __forceinline__ unsigned wsum(unsigned v) { for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o); return v; }
// SUM4: all four words; R64: 64-bit region count and modulo; STORE: warp sums stored per warp
template <bool SUM4, bool R64, bool STORE>
__global__ void k(const uint4* __restrict__ b, u64 regions, unsigned* out) {
  u64 r; if (R64) r = blockIdx.x % regions; else r = blockIdx.x % (unsigned)regions;
  uint4 v[16];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    u64 at = ((u64)i * regions + r) * 2 * 512 + threadIdx.x;
    v[2 * i] = __ldcs(b + at); v[2 * i + 1] = __ldcs(b + at + 512);
  }
  unsigned acc = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) acc += SUM4 ? v[i].x + v[i].y + v[i].z + v[i].w : v[i].x + v[i].w;
  if (STORE) { acc = wsum(acc); if ((threadIdx.x & 31) == 0) out[(blockIdx.x * 512ull + threadIdx.x) / 32] = acc; }
  else if (acc == 0x12345678u) out[0] = acc;
}
__global__ void fill(uint4* p, u64 n) { for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) p[i] = make_uint4((unsigned)i, 1, 2, 3); }
template <bool A, bool B, bool C>
void run(const char* name, const uint4* buf, u64 regions, unsigned* out, u64 total) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const u64 blocks = total / (16ull * 512 * 16);
  for (int gap : {0, 1}) {
    std::vector<double> r;
    for (int s = 0; s < 8; ++s) {
      if (gap) usleep(2000);
      cudaEventRecord(a); for (int l = 0; l < 2; ++l) k<A, B, C><<<(unsigned)blocks, 512>>>(buf, regions, out);
      cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b);
      if (s) r.push_back(2.0 * total / (ms / 1e3) / 1e9);
    }
    std::sort(r.begin(), r.end());
    printf("%-28s %s: median %.1f best %.1f\n", name, gap ? "2 ms idle before" : "back to back    ", r[r.size() / 2], r.back());
  }
}
int main() {
  const u64 f = 6ull << 30; uint4* B; unsigned* out;
  cudaMalloc(&B, f); cudaMalloc(&out, 64ull << 20);
  fill<<<4096, 256>>>(B, f / 16); cudaDeviceSynchronize();
  const u64 regions = f / (16ull * 512 * 16), total = 96ull << 30;
  run<false, false, false>("exp4 (x+w, 32-bit mod)", B, regions, out, total);
  run<true, false, false>("sum of 4 words", B, regions, out, total);
  run<false, true, false>("64-bit modulo", B, regions, out, total);
  run<false, false, true>("warp sums stored", B, regions, out, total);
  run<true, true, true>("all three (the tuner's)", B, regions, out, total);
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
