// exp6: does the way pinned host memory is allocated change H2D / D2H bandwidth, and how much do
// fresh allocations vary? Modes: cudaMallocHost; 2 MiB-aligned memory with MADV_HUGEPAGE, touched,
// then cudaHostRegister; plain 4 KiB pages registered; explicit huge pages (MAP_HUGETLB) if any.
// Each mode: 3 fresh 1 GiB buffers; per buffer 7 samples of 4 x 1 GiB in 256 MiB chunks.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 exp6.cu -o exp6
#include <sys/mman.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

static long anon_huge_kb() {
  std::ifstream f("/proc/meminfo");
  std::string k; long v; std::string unit;
  while (f >> k >> v) { std::getline(f, unit); if (k == "AnonHugePages:") return v; }
  return -1;
}

int main() {
  const size_t bytes = 1ull << 30, chunk = 256ull << 20;
  void* dev; CK(cudaMalloc(&dev, bytes));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  const char* names[] = {"cudaMallocHost", "THP+register", "4K+register", "hugetlb+register"};
  for (int mode = 0; mode < 4; ++mode) {
    for (int rep = 0; rep < 3; ++rep) {
      void* h = nullptr;
      long thp0 = anon_huge_kb();
      if (mode == 0) CK(cudaMallocHost(&h, bytes));
      else if (mode == 1) { if (posix_memalign(&h, 2 << 20, bytes)) return 1; madvise(h, bytes, MADV_HUGEPAGE); std::memset(h, 1, bytes); CK(cudaHostRegister(h, bytes, 0)); }
      else if (mode == 2) { if (posix_memalign(&h, 4096, bytes)) return 1; madvise(h, bytes, MADV_NOHUGEPAGE); std::memset(h, 1, bytes); CK(cudaHostRegister(h, bytes, 0)); }
      else {
        h = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
        if (h == MAP_FAILED) { std::printf("%-18s no explicit huge pages\n", names[mode]); break; }
        std::memset(h, 1, bytes); CK(cudaHostRegister(h, bytes, 0));
      }
      if (mode == 0) std::memset(h, 1, bytes);
      long thp1 = anon_huge_kb();
      double med[2];
      for (int dir = 0; dir < 2; ++dir) {
        std::vector<double> gbps;
        for (int i = -1; i < 7; ++i) {
          CK(cudaEventRecord(a, s));
          for (int l = 0; l < 4; ++l)
            for (size_t off = 0; off < bytes; off += chunk)
              CK(dir == 0 ? cudaMemcpyAsync((char*)dev + off, (char*)h + off, chunk, cudaMemcpyHostToDevice, s)
                          : cudaMemcpyAsync((char*)h + off, (char*)dev + off, chunk, cudaMemcpyDeviceToHost, s));
          CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
          float ms; CK(cudaEventElapsedTime(&ms, a, b));
          if (i >= 0) gbps.push_back(4.0 * bytes / ms / 1e6);
        }
        std::sort(gbps.begin(), gbps.end());
        med[dir] = gbps[3];
        std::printf("%-18s buf %d %s: median %.2f min %.2f max %.2f GB/s\n", names[mode], rep, dir ? "D2H" : "H2D", gbps[3], gbps.front(), gbps.back());
      }
      std::printf("%-18s buf %d AnonHugePages +%ld MiB\n", names[mode], rep, (thp1 - thp0) / 1024);
      if (mode == 0) CK(cudaFreeHost(h));
      else { CK(cudaHostUnregister(h)); if (mode == 3) munmap(h, bytes); else std::free(h); }
    }
  }
  return 0;
}
