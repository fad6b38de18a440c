// Throwaway experiments for issue 8 (not part of the project): footprint / window / offset effects
// on device read and copy, a TMA bulk copy, and bidirectional host copies.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

template <int U>
__global__ void read_k(const uint4* __restrict__ b, std::uint64_t n, unsigned* out) {
  const std::uint64_t t = (std::uint64_t)gridDim.x * blockDim.x;
  std::uint64_t base = blockIdx.x * (std::uint64_t)blockDim.x + threadIdx.x;
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
__global__ void copy_k(uint4* __restrict__ a, const uint4* __restrict__ b, std::uint64_t n) {
  const std::uint64_t t = (std::uint64_t)gridDim.x * blockDim.x;
  std::uint64_t base = blockIdx.x * (std::uint64_t)blockDim.x + threadIdx.x;
  for (; base < n; base += t * U) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = b[base + u * t];
#pragma unroll
    for (int u = 0; u < U; ++u) a[base + u * t] = v[u];
  }
}

// TMA bulk copy: one thread per CTA drives S stages of `chunk` bytes through shared memory.
__device__ __forceinline__ unsigned sm(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
template <int S>
__global__ void tma_copy(char* dst, const char* src, std::uint64_t nchunks, unsigned chunk) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) unsigned long long bar[S];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sm(&bar[s])));
  asm volatile("fence.mbarrier_init.release.cluster;");
  asm volatile("fence.proxy.async.shared::cta;");
  auto issue_load = [&](std::uint64_t c, int s) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sm(&bar[s])), "r"(chunk) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sm(smem + (std::size_t)s * chunk)), "l"(src + c * chunk), "r"(chunk), "r"(sm(&bar[s])) : "memory");
  };
  std::uint64_t mine = nchunks > blockIdx.x ? (nchunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  for (std::uint64_t k = 0; k < mine && k < S; ++k) issue_load(blockIdx.x + k * gridDim.x, (int)k);
  for (std::uint64_t k = 0; k < mine; ++k) {
    const int s = (int)(k % S);
    const unsigned parity = (unsigned)((k / S) & 1);
    unsigned done = 0;
    while (!done) {
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(sm(&bar[s])), "r"(parity) : "memory");
    }
    const std::uint64_t c = blockIdx.x + k * gridDim.x;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(dst + c * chunk), "r"(sm(smem + (std::size_t)s * chunk)), "r"(chunk) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    // refill the stage of the previous chunk once its store has read shared memory
    if (k >= 1 && k - 1 + S < mine) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      issue_load(blockIdx.x + (k - 1 + S) * gridDim.x, (int)((k - 1) % S));
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

struct Timer {
  cudaEvent_t a, b;
  Timer() { cudaEventCreate(&a); cudaEventCreate(&b); }
  void start(cudaStream_t s = 0) { cudaEventRecord(a, s); }
  double stop(cudaStream_t s = 0) { cudaEventRecord(b, s); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); return ms / 1e3; }
};

template <class F>
double best_of(int reps, F f) {  // median of reps
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) v.push_back(f());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

__global__ void fill(uint4* p, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * (std::uint64_t)blockDim.x + threadIdx.x; i < n; i += (std::uint64_t)gridDim.x * blockDim.x)
    p[i] = make_uint4((unsigned)i, 1, 2, 3);
}

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::uint64_t GiB = 1ull << 30, MiB = 1ull << 20;
  const std::uint64_t big = 8 * GiB;
  uint4 *A, *B; unsigned* out;
  CK(cudaMalloc(&A, big)); CK(cudaMalloc(&B, big)); CK(cudaMalloc(&out, 64));
  fill<<<4096, 256>>>(A, big / 16); fill<<<4096, 256>>>(B, big / 16); CK(cudaDeviceSynchronize());
  Timer tm;
  const int L = 5;
  // 1. read: cyclic footprint
  printf("== read, cyclic footprint (unroll 8 cs one-pass 1024)\n");
  for (std::uint64_t f : {240 * MiB, 480 * MiB, 1 * GiB, 2 * GiB, 4 * GiB}) {
    std::uint64_t n = f / 16; int block = 1024; std::uint64_t per = block * 8ull; n = n / per * per;
    int grid = (int)(n / per);
    double t = best_of(7, [&] { tm.start(); for (int i = 0; i < L; ++i) read_k<8><<<grid, block>>>(B, n, out); return tm.stop(); });
    printf("read %6llu MiB: %.1f GB/s\n", (unsigned long long)(f >> 20), n * 16.0 * L / t / 1e9);
  }
  printf("== read, rotating windows over 8 GiB (unroll 8)\n");
  for (std::uint64_t w : {128 * MiB, 256 * MiB, 512 * MiB, 1 * GiB}) {
    std::uint64_t n = w / 16; int block = 1024; std::uint64_t per = block * 8ull; n = n / per * per; int grid = (int)(n / per);
    std::uint64_t windows = big / w; int launches = (int)std::min<std::uint64_t>(windows, 32);
    std::uint64_t k = 0;
    double t = best_of(7, [&] { tm.start(); for (int i = 0; i < launches; ++i) { read_k<8><<<grid, block>>>(B + (k % windows) * (w / 16), n, out); ++k; } return tm.stop(); });
    printf("read window %5llu MiB x %d: %.1f GB/s\n", (unsigned long long)(w >> 20), launches, n * 16.0 * launches / t / 1e9);
  }
  // 2. copy: cyclic footprint, kernel and memcpy
  printf("== copy, cyclic (2 arrays)\n");
  for (std::uint64_t f : {256 * MiB, 512 * MiB, 1 * GiB, 2 * GiB}) {
    std::uint64_t n = f / 16; int block = 256; std::uint64_t per = block; n = n / per * per; int grid = (int)(n / per);
    double t = best_of(7, [&] { tm.start(); for (int i = 0; i < L; ++i) copy_k<1><<<grid, block>>>(A, B, n); return tm.stop(); });
    double tm2 = best_of(7, [&] { tm.start(); for (int i = 0; i < L; ++i) cudaMemcpyAsync(A, B, n * 16, cudaMemcpyDeviceToDevice); return tm.stop(); });
    double t4 = best_of(7, [&] { tm.start(); for (int i = 0; i < L; ++i) copy_k<4><<<grid / 4, block>>>(A, B, n); return tm.stop(); });
    printf("copy %5llu MiB/array: kernel u1 %.1f, kernel u4 %.1f, memcpy %.1f GB/s\n", (unsigned long long)(f >> 20),
           2 * n * 16.0 * L / t / 1e9, 2 * n * 16.0 * L / t4 / 1e9, 2 * n * 16.0 * L / tm2 / 1e9);
  }
  printf("== copy, rotating windows over 8 GiB arrays\n");
  for (std::uint64_t w : {128 * MiB, 256 * MiB, 512 * MiB}) {
    std::uint64_t n = w / 16; int block = 256; int grid = (int)(n / block);
    std::uint64_t windows = big / w; int launches = (int)std::min<std::uint64_t>(windows, 32); std::uint64_t k = 0;
    double t = best_of(7, [&] { tm.start(); for (int i = 0; i < launches; ++i) { std::uint64_t o = (k % windows) * n; copy_k<1><<<grid, block>>>(A + o, B + o, n); ++k; } return tm.stop(); });
    k = 0;
    double t2 = best_of(7, [&] { tm.start(); for (int i = 0; i < launches; ++i) { std::uint64_t o = (k % windows) * n; cudaMemcpyAsync(A + o, B + o, n * 16, cudaMemcpyDeviceToDevice); ++k; } return tm.stop(); });
    printf("copy window %4llu MiB x %d: kernel %.1f, memcpy %.1f GB/s\n", (unsigned long long)(w >> 20), launches,
           2 * n * 16.0 * launches / t / 1e9, 2 * n * 16.0 * launches / t2 / 1e9);
  }
  printf("== copy 512 MiB, dst offset within B's neighbourhood (src = A, dst = A + 4 GiB + delta)\n");
  for (std::uint64_t d : {(std::uint64_t)0, (std::uint64_t)4096, (std::uint64_t)65536, 1 * MiB, 3 * MiB + 4096, 64 * MiB + 12288, 2 * GiB}) {
    std::uint64_t n = 512 * MiB / 16; int block = 256; int grid = (int)(n / block);
    uint4* dst = A + (4 * GiB + d) / 16;
    double t = best_of(7, [&] { tm.start(); for (int i = 0; i < L; ++i) copy_k<1><<<grid, block>>>(dst, A, n); return tm.stop(); });
    printf("copy offset %10llu: %.1f GB/s\n", (unsigned long long)d, 2 * n * 16.0 * L / t / 1e9);
  }
  printf("== TMA bulk copy\n");
  for (unsigned chunk : {16384u, 32768u, 49152u}) {
    for (int per_sm : {1, 2, 4}) {
      const int S = 4;
      size_t smem = (size_t)S * chunk;
      if (smem * per_sm > 220 * 1024) continue;
      CK(cudaFuncSetAttribute(tma_copy<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      for (std::uint64_t f : {512 * MiB, 2 * GiB}) {
        std::uint64_t nchunks = f / chunk;
        int grid = sms * per_sm;
        CK(cudaMemset(A, 0, f));
        double t = best_of(7, [&] { tm.start(); for (int i = 0; i < L; ++i) tma_copy<4><<<grid, 32, smem>>>((char*)A, (const char*)B, nchunks, chunk); return tm.stop(); });
        CK(cudaGetLastError());
        std::vector<uint4> h(4);
        CK(cudaMemcpy(h.data(), A + (nchunks * chunk / 16) - 4, 64, cudaMemcpyDeviceToHost));
        bool ok = h[3].x == (unsigned)(nchunks * chunk / 16 - 1) && h[3].y == 1;
        printf("tma chunk %u x %d stages, %d CTA/SM, %llu MiB: %.1f GB/s %s\n", chunk, S, per_sm, (unsigned long long)(f >> 20),
               2.0 * nchunks * chunk * L / t / 1e9, ok ? "ok" : "WRONG");
      }
    }
  }
  // 3. bidirectional host copies
  printf("== bidirectional pinned (H2D bandwidth while D2H runs; total)\n");
  for (std::uint64_t bytes : {256 * MiB, 512 * MiB, 1 * GiB}) {
    void *hu, *hd; CK(cudaMallocHost(&hu, bytes)); CK(cudaMallocHost(&hd, bytes));
    memset(hu, 1, bytes); memset(hd, 0, bytes);
    cudaStream_t su, sd; cudaStreamCreateWithFlags(&su, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&sd, cudaStreamNonBlocking);
    cudaEvent_t e0, eu0, eu1, ed0, ed1; for (auto* e : {&e0, &eu0, &eu1, &ed0, &ed1}) cudaEventCreate(e);
    for (int order = 0; order < 2; ++order) for (int loops : {1, 8}) {
      std::vector<double> hu_bw, hd_bw, tot;
      for (int r = 0; r < 6; ++r) {
        CK(cudaDeviceSynchronize());
        // hold both streams behind one event recorded after a short spin
        cudaEventRecord(e0, 0);
        cudaStreamWaitEvent(su, e0, 0); cudaStreamWaitEvent(sd, e0, 0);
        auto up = [&] { cudaEventRecord(eu0, su); for (int l = 0; l < loops; ++l) cudaMemcpyAsync(A, hu, bytes / loops * 1, cudaMemcpyHostToDevice, su); cudaEventRecord(eu1, su); };
        auto dn = [&] { cudaEventRecord(ed0, sd); for (int l = 0; l < loops; ++l) cudaMemcpyAsync(hd, B, bytes / loops * 1, cudaMemcpyDeviceToHost, sd); cudaEventRecord(ed1, sd); };
        if (order == 0) { up(); dn(); } else { dn(); up(); }
        CK(cudaDeviceSynchronize());
        float a, b, c, d; cudaEventElapsedTime(&a, eu0, eu1); cudaEventElapsedTime(&b, ed0, ed1);
        cudaEventElapsedTime(&c, e0, eu1); cudaEventElapsedTime(&d, e0, ed1);
        if (r) { hu_bw.push_back(bytes / (a / 1e3) / 1e9); hd_bw.push_back(bytes / (b / 1e3) / 1e9); tot.push_back(2.0 * bytes / (std::max(c, d) / 1e3) / 1e9); }
      }
      std::sort(hu_bw.begin(), hu_bw.end()); std::sort(hd_bw.begin(), hd_bw.end()); std::sort(tot.begin(), tot.end());
      printf("bidir %4llu MiB, %s first, %d pieces: H2D %.1f, D2H %.1f, total %.1f GB/s\n", (unsigned long long)(bytes >> 20),
             order == 0 ? "H2D" : "D2H", loops, hu_bw[2], hd_bw[2], tot[2]);
    }
    cudaFreeHost(hu); cudaFreeHost(hd);
  }
  return 0;
}
