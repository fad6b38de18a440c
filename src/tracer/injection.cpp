// The allocation tracer, loaded by the CUDA driver through CUDA_INJECTION64_PATH: subscribes
// to the driver API's allocation calls through CUPTI and hands each, read in its API-exit
// callback, to the Recorder. It records; it never analyses (docs/trace.md).
// Environment: VRAMDOC_TRACE_DIR (default "."), VRAMDOC_TRACE_FLUSH_MS (default 200).
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>

#include "tracer/recorder/recorder.hpp"

namespace vramdoc::tracer {
namespace {

using trace::EventRecord;
using trace::MemKind;
using trace::Op;

// Never destroyed: callbacks may still arrive while the process tears down.
alignas(Recorder) unsigned char g_storage[sizeof(Recorder)];
Recorder* g_recorder = nullptr;
std::uint64_t g_skip_start[2], g_skip_end[2];  // this module and CUPTI: frames not worth keeping
thread_local bool t_inside = false;           // recursion guard

template <class Params>
const Params& params(const CUpti_CallbackData* info) {
  return *static_cast<const Params*>(info->functionParams);
}

std::uint32_t device_of(CUcontext context) {
  std::uint32_t device = trace::kUnknownDevice;
  if (context == nullptr || cuptiGetDeviceId(context, &device) != CUPTI_SUCCESS) return trace::kUnknownDevice;
  return device;
}

std::uint64_t as_u64(const void* handle) { return reinterpret_cast<std::uint64_t>(handle); }

// An output parameter's value: read only after a successful call (a failed one may have
// been given a null pointer, and leaves the output unset).
template <class T>
std::uint64_t output(const T* where, bool succeeded) {
  return succeeded && where != nullptr ? static_cast<std::uint64_t>(*where) : 0;
}

// Fills `e` from the call's parameters; false for calls that are not recorded.
bool describe_call(CUpti_CallbackId cbid, const CUpti_CallbackData* info, bool ok, EventRecord& e) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
      const auto& p = params<cuMemAlloc_v2_params>(info);
      e = {.address = output(p.dptr, ok), .size_bytes = p.bytesize, .op = Op::Alloc, .kind = MemKind::Device};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
      const auto& p = params<cuMemAllocPitch_v2_params>(info);
      e = {.address = output(p.dptr, ok), .size_bytes = (ok ? output(p.pPitch, ok) : p.WidthInBytes) * p.Height, .op = Op::Alloc, .kind = MemKind::Pitch};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
      const auto& p = params<cuMemAllocManaged_params>(info);
      e = {.address = output(p.dptr, ok), .size_bytes = p.bytesize, .op = Op::Alloc, .kind = MemKind::Managed};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
      const auto& p = params<cuMemAllocAsync_params>(info);  // the _ptsz struct has the same layout
      e = {.address = output(p.dptr, ok), .size_bytes = p.bytesize, .stream = as_u64(p.hStream), .op = Op::Alloc, .kind = MemKind::Async};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
      const auto& p = params<cuMemAllocFromPoolAsync_params>(info);
      e = {.address = output(p.dptr, ok), .size_bytes = p.bytesize, .stream = as_u64(p.hStream), .op = Op::Alloc, .kind = MemKind::Async};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
      e = {.address = params<cuMemFree_v2_params>(info).dptr, .op = Op::Free, .kind = MemKind::Device};
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz: {
      const auto& p = params<cuMemFreeAsync_params>(info);
      e = {.address = p.dptr, .stream = as_u64(p.hStream), .op = Op::Free, .kind = MemKind::Async};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
      const auto& p = params<cuMemCreate_params>(info);
      e = {.address = output(p.handle, ok), .size_bytes = p.size, .op = Op::Alloc, .kind = MemKind::VmmPhysical};
      if (p.prop != nullptr && p.prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        e.device = static_cast<std::uint32_t>(p.prop->location.id);
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease:
      e = {.address = params<cuMemRelease_params>(info).handle, .op = Op::Free, .kind = MemKind::VmmPhysical};
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
      const auto& p = params<cuMemMap_params>(info);
      e = {.address = p.ptr, .size_bytes = p.size, .op = Op::Alloc, .kind = MemKind::VmmMap};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
      const auto& p = params<cuMemUnmap_params>(info);
      e = {.address = p.ptr, .size_bytes = p.size, .op = Op::Free, .kind = MemKind::VmmMap};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate: {
      const auto& p = params<cuMemPoolCreate_params>(info);
      e = {.address = ok && p.pool != nullptr ? as_u64(*p.pool) : 0, .op = Op::Alloc, .kind = MemKind::Pool};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy:
      e = {.address = as_u64(params<cuMemPoolDestroy_params>(info).pool), .op = Op::Free, .kind = MemKind::Pool};
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2: {  // cudaMallocHost
      const auto& p = params<cuMemAllocHost_v2_params>(info);
      e = {.address = ok && p.pp != nullptr ? as_u64(*p.pp) : 0, .size_bytes = p.bytesize, .op = Op::Alloc, .kind = MemKind::Pinned};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc: {  // cudaHostAlloc
      const auto& p = params<cuMemHostAlloc_params>(info);
      e = {.address = ok && p.pp != nullptr ? as_u64(*p.pp) : 0, .size_bytes = p.bytesize, .op = Op::Alloc, .kind = MemKind::Pinned};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost:  // cudaFreeHost
      e = {.address = as_u64(params<cuMemFreeHost_params>(info).p), .op = Op::Free, .kind = MemKind::Pinned};
      return true;
    default:
      return false;
  }
}

constexpr CUpti_CallbackId kTracedCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate, CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
    CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
};

bool skipped_frame(std::uint64_t ip) {
  for (int i = 0; i < 2; ++i)
    if (ip >= g_skip_start[i] && ip < g_skip_end[i]) return true;
  return false;
}

void on_exit_of_call(CUpti_CallbackId cbid, const CUpti_CallbackData* info) {
  const CUresult result = *static_cast<const CUresult*>(info->functionReturnValue);
  EventRecord e;
  if (!describe_call(cbid, info, result == CUDA_SUCCESS, e)) return;
  if (e.op == Op::Free && e.address == 0) return;  // cuMemFree(0) is a no-op; PyTorch calls it
  if (result != CUDA_SUCCESS) {  // only refused allocations are worth recording
    if (e.op != Op::Alloc || result != CUDA_ERROR_OUT_OF_MEMORY) return;
    e.op = Op::Failed;
  }
  if (e.device == trace::kUnknownDevice) e.device = device_of(info->context);
  e.api = static_cast<std::uint16_t>(cbid);
  e.t_ns = g_recorder->now_ns();
  std::uint64_t ips[kMaxStackDepth + 8];
  int depth = 0, first = 0;
  if (e.op != Op::Free) {
    depth = capture_stack(ips, kMaxStackDepth + 8);
    while (first < depth && skipped_frame(ips[first])) ++first;
  }
  const int kept = depth - first < kMaxStackDepth ? depth - first : kMaxStackDepth;
  g_recorder->record(e, ips + first, kept);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || info->callbackSite != CUPTI_API_EXIT || t_inside) return;
  t_inside = true;
  on_exit_of_call(cbid, info);
  t_inside = false;
}

void* flush_periodically(void* arg) noexcept {
  const long interval_ms = reinterpret_cast<long>(arg);
  const timespec pause{interval_ms / 1000, (interval_ms % 1000) * 1'000'000L};
  for (;;) {
    nanosleep(&pause, nullptr);
    g_recorder->flush();
  }
  return nullptr;
}

void flush_at_exit() noexcept { g_recorder->flush(); }

__attribute__((destructor)) void flush_at_unload() noexcept {
  if (g_recorder != nullptr) g_recorder->flush();
}

int start() noexcept {
  const char* dir = std::getenv("VRAMDOC_TRACE_DIR");
  g_recorder = new (g_storage) Recorder;
  if (!g_recorder->open(dir != nullptr && dir[0] != '\0' ? dir : ".")) {
    std::fprintf(stderr, "vramdoc tracer: cannot create a trace file in %s; not tracing\n", dir ? dir : ".");
    return 1;  // the program runs on untraced
  }
  module_range(reinterpret_cast<const void*>(&on_callback), &g_skip_start[0], &g_skip_end[0]);
  module_range(reinterpret_cast<const void*>(&cuptiSubscribe), &g_skip_start[1], &g_skip_end[1]);
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult subscribed = cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_callback), nullptr);
  if (subscribed != CUPTI_SUCCESS) {  // e.g. another CUPTI tool (a profiler) holds the subscription
    const char* why = "unknown error";
    cuptiGetResultString(subscribed, &why);
    std::fprintf(stderr, "vramdoc tracer: CUPTI refused the subscription (%s); not tracing\n", why);
    return 1;
  }
  for (auto cbid : kTracedCalls) cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  std::atexit(flush_at_exit);
  const char* interval = std::getenv("VRAMDOC_TRACE_FLUSH_MS");
  long interval_ms = interval != nullptr ? std::strtol(interval, nullptr, 10) : 200;
  if (interval_ms < 1 || interval_ms > 60'000) interval_ms = 200;
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_create(&thread, &attr, flush_periodically, reinterpret_cast<void*>(interval_ms));
  pthread_attr_destroy(&attr);
  return 1;
}

}  // namespace
}  // namespace vramdoc::tracer

// The CUDA driver calls this once, from cuInit, when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return 1;
  return vramdoc::tracer::start();
}
