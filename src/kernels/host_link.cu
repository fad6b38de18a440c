// The host link (pinned and pageable copies, the chunk x streams sweep, both directions at
// once), unified-memory migration, and peer-to-peer copies.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/common.cuh"

namespace vramdoc::bench {

namespace {

constexpr std::uint32_t kSeed = 0x1357u;
constexpr std::uint64_t kGateNs = 2'000'000;  // the spin gate holds the queue for 2 ms

void fill_host(void* p, std::uint64_t bytes, std::uint32_t seed) {
  auto* w = static_cast<std::uint32_t*>(p);
  for (std::uint64_t i = 0; i < bytes / 4; ++i) w[i] = static_cast<std::uint32_t>(i) + seed;
}

std::uint64_t host_mismatches(const void* p, std::uint64_t bytes, std::uint32_t seed) {
  const auto* w = static_cast<const std::uint32_t*>(p);
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < bytes / 4; ++i) bad += w[i] != static_cast<std::uint32_t>(i) + seed;
  return bad;
}

__global__ void managed_read_kernel(const uint4* a, std::uint64_t count, unsigned* slots) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  std::uint32_t acc = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const uint4 v = a[i];
    acc += v.x + v.y + v.z + v.w;
  }
  detail::add_to_slots(slots, acc);
}

// Queues `bytes` in chunks round-robin over `streams`, direction `kind` (H2D or D2H).
Result<bool> queue_copies(char* dst, const char* src, std::uint64_t bytes, std::uint64_t chunk, cudaMemcpyKind kind,
                          const std::vector<cudaStream_t>& streams) {
  std::size_t next = 0;
  for (std::uint64_t off = 0; off < bytes; off += chunk) {
    VD_CUDA(cudaMemcpyAsync(dst + off, src + off, std::min(chunk, bytes - off), kind, streams[next]));
    next = (next + 1) % streams.size();
  }
  return true;
}

}  // namespace

Result<Timed> host_copy(CopyKind kind, bool pinned, std::uint64_t bytes, std::uint64_t chunk_bytes, int streams,
                        int samples, int loops) {
  loops = std::max(loops, 1);
  bytes = bytes / 16 * 16;
  detail::HostBuffer host_up, host_down;
  detail::DeviceArray<uint4> dev_up, dev_down;
  const bool up = kind != CopyKind::D2H, down = kind != CopyKind::H2D;
  if (up) {
    VD_CUDA(host_up.alloc(bytes, pinned));
    VD_CUDA(dev_up.alloc(bytes / 16));
    fill_host(host_up.ptr, bytes, kSeed);
  }
  if (down) {
    VD_CUDA(host_down.alloc(bytes, pinned));
    VD_CUDA(dev_down.alloc(bytes / 16));
    std::memset(host_down.ptr, 0, bytes);
    if (auto r = detail::fill_affine(dev_down.ptr, bytes / 16, 1, kSeed); !r) return make_error(r.error());
  }
  std::vector<detail::Stream> owned(static_cast<std::size_t>(2 * streams + 1));
  std::vector<cudaStream_t> up_streams, down_streams;
  for (int i = 0; i < streams; ++i) up_streams.push_back(owned[i].s), down_streams.push_back(owned[streams + i].s);
  cudaStream_t gate = owned.back().s;
  detail::Event start, up_done, down_done, end;
  std::vector<detail::Event> stream_done(static_cast<std::size_t>(2 * streams));
  Timed out;
  std::vector<double> totals;
  for (int i = -1; i < samples; ++i) {  // sample -1 is the warm-up
    if (pinned) {
      if (auto r = detail::spin_gate(gate, kGateNs); !r) return make_error(r.error());
    }
    VD_CUDA(cudaEventRecord(start.e, gate));
    for (int s = 0; s < 2 * streams; ++s) VD_CUDA(cudaStreamWaitEvent(owned[s].s, start.e, 0));
    for (int l = 0; l < loops && up; ++l) {
      auto r = queue_copies(reinterpret_cast<char*>(dev_up.ptr), static_cast<const char*>(host_up.ptr), bytes,
                            chunk_bytes, cudaMemcpyHostToDevice, up_streams);
      if (!r) return make_error(r.error());
    }
    for (int l = 0; l < loops && down; ++l) {
      auto r = queue_copies(static_cast<char*>(host_down.ptr), reinterpret_cast<const char*>(dev_down.ptr), bytes,
                            chunk_bytes, cudaMemcpyDeviceToHost, down_streams);
      if (!r) return make_error(r.error());
    }
    for (int s = 0; s < 2 * streams; ++s) VD_CUDA(cudaEventRecord(stream_done[s].e, owned[s].s));
    for (int s = 0; s < streams; ++s) VD_CUDA(cudaStreamWaitEvent(gate, stream_done[s].e, 0));
    VD_CUDA(cudaEventRecord(up_done.e, gate));
    for (int s = streams; s < 2 * streams; ++s) VD_CUDA(cudaStreamWaitEvent(gate, stream_done[s].e, 0));
    VD_CUDA(cudaEventRecord(end.e, gate));
    auto total = detail::elapsed_seconds(start.e, end.e);
    if (!total) return make_error(total.error());
    auto first = detail::elapsed_seconds(start.e, up ? up_done.e : end.e);
    if (!first) return make_error(first.error());
    if (i < 0) continue;
    out.seconds.push_back(*first);
    totals.push_back(static_cast<double>(bytes) * loops * (up && down ? 2 : 1) / *total / 1e9);
  }
  if (up) {
    auto bad = detail::count_mismatches(dev_up.ptr, bytes / 16, 1, kSeed);
    if (!bad) return make_error(bad.error());
    if (*bad) return make_error("host->device copy: " + std::to_string(*bad) + " wrong words on the device");
  }
  if (down && host_mismatches(host_down.ptr, bytes, kSeed)) {
    return make_error("device->host copy: wrong words in host memory");
  }
  out.bytes_per_sample = static_cast<double>(bytes) * loops;
  std::sort(totals.begin(), totals.end());
  char cfg[200];
  std::snprintf(cfg, sizeof cfg, "%s, %.0f MiB in %.0f MiB chunks over %d stream(s)%s%s", pinned ? "pinned" : "pageable",
                static_cast<double>(bytes) / (1 << 20), static_cast<double>(chunk_bytes) / (1 << 20), streams,
                loops > 1 ? (", x" + std::to_string(loops) + " per sample").c_str() : "", pinned ? ", spin-gated queue" : "");
  out.config = cfg;
  if (up && down && !totals.empty()) {
    std::snprintf(cfg, sizeof cfg, "; H2D while D2H runs, both directions together %.1f GB/s", totals[totals.size() / 2]);
    out.config += cfg;
  }
  return out;
}

Result<Timed> managed_migration(std::uint64_t bytes, bool prefetch, int samples) {
  bytes = bytes / 16 * 16;
  int device = 0;
  VD_CUDA(cudaGetDevice(&device));
  std::size_t free_bytes = 0, total_bytes = 0;
  VD_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes / 4) return make_error("unified memory: refusing more than a quarter of the free memory");
  uint4* p = nullptr;
  VD_CUDA(cudaMallocManaged(&p, bytes));
  struct Freer {
    uint4* p;
    ~Freer() { cudaFree(p); }
  } freer{p};
  detail::DeviceArray<unsigned> slots;
  VD_CUDA(slots.alloc(detail::kSlots));
  detail::Stream stream;
  detail::Event start, end;
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = device;
  Timed out;
  for (int i = -1; i < samples; ++i) {
    fill_host(p, bytes, kSeed + static_cast<std::uint32_t>(i));  // the pages move to the host
    if (auto r = detail::clear_slots(slots.ptr, stream.s); !r) return make_error(r.error());
    VD_CUDA(cudaEventRecord(start.e, stream.s));
    if (prefetch) VD_CUDA(cudaMemPrefetchAsync(p, bytes, where, 0, stream.s));
    else managed_read_kernel<<<2048, 256, 0, stream.s>>>(p, bytes / 16, slots.ptr);
    VD_CUDA(cudaGetLastError());
    VD_CUDA(cudaEventRecord(end.e, stream.s));
    auto t = detail::elapsed_seconds(start.e, end.e);
    if (!t) return make_error(t.error());
    if (prefetch) managed_read_kernel<<<2048, 256, 0, stream.s>>>(p, bytes / 16, slots.ptr);
    VD_CUDA(cudaStreamSynchronize(stream.s));
    auto sum = detail::sum_slots(slots.ptr);
    if (!sum) return make_error(sum.error());
    const auto want = detail::affine_sum(bytes / 4, 1, kSeed + static_cast<std::uint32_t>(i));
    if (auto ok = detail::expect_checksum("unified memory", *sum, want); !ok) return make_error(ok.error());
    if (i >= 0) out.seconds.push_back(*t);
  }
  out.bytes_per_sample = static_cast<double>(bytes);
  char cfg[160];
  std::snprintf(cfg, sizeof cfg, "%.0f MiB managed, host-touched before each sample, %s",
                static_cast<double>(bytes) / (1 << 20),
                prefetch ? "cudaMemPrefetchAsync to the GPU" : "read by a kernel (migration on fault)");
  out.config = cfg;
  return out;
}

Result<Timed> peer_copy(int src, int dst, std::uint64_t bytes, int samples) {
  int can = 0;
  VD_CUDA(cudaDeviceCanAccessPeer(&can, dst, src));
  if (!can) return make_error("GPU " + std::to_string(dst) + " cannot access GPU " + std::to_string(src) + " as a peer");
  bytes = bytes / 16 * 16;
  detail::DeviceArray<uint4> from, to;
  VD_CUDA(cudaSetDevice(src));
  VD_CUDA(from.alloc(bytes / 16));
  if (auto r = detail::fill_affine(from.ptr, bytes / 16, 1, kSeed); !r) return make_error(r.error());
  VD_CUDA(cudaDeviceSynchronize());
  VD_CUDA(cudaSetDevice(dst));
  const cudaError_t enabled = cudaDeviceEnablePeerAccess(src, 0);
  if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled) return detail::cuda_error("cudaDeviceEnablePeerAccess", enabled);
  cudaGetLastError();  // clears "already enabled"
  VD_CUDA(to.alloc(bytes / 16));
  detail::Event start, end;
  Timed out;
  for (int i = -1; i < samples; ++i) {
    VD_CUDA(cudaEventRecord(start.e));
    VD_CUDA(cudaMemcpyPeerAsync(to.ptr, dst, from.ptr, src, bytes));
    VD_CUDA(cudaEventRecord(end.e));
    auto t = detail::elapsed_seconds(start.e, end.e);
    if (!t) return make_error(t.error());
    if (i >= 0) out.seconds.push_back(*t);
  }
  auto bad = detail::count_mismatches(to.ptr, bytes / 16, 1, kSeed);
  if (!bad) return make_error(bad.error());
  if (*bad) return make_error("peer copy: wrong words on the destination GPU");
  out.bytes_per_sample = static_cast<double>(bytes);
  out.config = "cudaMemcpyPeerAsync, " + std::to_string(bytes >> 20) + " MiB, GPU " + std::to_string(src) + " -> " +
               std::to_string(dst);
  return out;
}

}  // namespace vramdoc::bench
