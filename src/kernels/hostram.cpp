// Host RAM bandwidth: threads read (sum) or copy slices of one buffer. Plain C++, no CUDA:
// it lives beside the kernels because only `bench` uses it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/kernels.cuh"

namespace vramdoc::bench {

namespace {

struct FreeDeleter {
  void operator()(std::uint64_t* p) const { std::free(p); }
};
using HostArray = std::unique_ptr<std::uint64_t[], FreeDeleter>;

HostArray allocate(std::uint64_t words) {
  return HostArray(static_cast<std::uint64_t*>(std::aligned_alloc(4096, (words * 8 + 4095) / 4096 * 4096)));
}

std::uint64_t sum_slice(const std::uint64_t* p, std::uint64_t n) {
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  std::uint64_t i = 0;
  for (; i + 4 <= n; i += 4) a += p[i], b += p[i + 1], c += p[i + 2], d += p[i + 3];
  for (; i < n; ++i) a += p[i];
  return a + b + c + d;
}

}  // namespace

Result<Timed> host_ram(bool copy, std::uint64_t bytes, unsigned threads, int samples) {
  if (threads == 0) threads = 1;
  const std::uint64_t words = bytes / 8 / threads * threads;
  HostArray src = allocate(words), dst = copy ? allocate(words) : HostArray();
  if (!src || (copy && !dst)) return make_error("host RAM: cannot allocate " + std::to_string(bytes >> 20) + " MiB");
  for (std::uint64_t i = 0; i < words; ++i) src[i] = i;
  if (copy) std::memset(dst.get(), 0, words * 8);  // pages faulted in before timing
  const std::uint64_t slice = words / threads;
  const std::uint64_t want = words % 2 == 0 ? (words / 2) * (words - 1) : words * ((words - 1) / 2);
  Timed out;
  for (int s = -1; s < samples; ++s) {
    std::vector<std::uint64_t> sums(threads);
    std::vector<std::thread> pool;
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::uint64_t* from = src.get() + t * slice;
        if (copy) std::memcpy(dst.get() + t * slice, from, slice * 8);
        else sums[t] = sum_slice(from, slice);
      });
    }
    for (auto& th : pool) th.join();
    const auto t1 = std::chrono::steady_clock::now();
    if (s >= 0) out.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    std::uint64_t total = 0;
    for (auto v : sums) total += v;
    if (!copy && total != want) return make_error("host RAM read: wrong sum");
  }
  if (copy && std::memcmp(src.get(), dst.get(), words * 8) != 0) return make_error("host RAM copy: wrong copy");
  out.bytes_per_sample = static_cast<double>(words * 8) * (copy ? 2 : 1);
  char cfg[120];
  std::snprintf(cfg, sizeof cfg, "%u threads, %.0f MiB%s", threads, static_cast<double>(words * 8) / (1 << 20),
                copy ? ", memcpy" : ", 64-bit sums");
  out.config = cfg;
  return out;
}

}  // namespace vramdoc::bench
