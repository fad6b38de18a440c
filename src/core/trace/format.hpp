// The .vdt allocation-trace format, version 3 (docs/trace-format.md): its constants, its record
// structs and the encoders shared by the tracer (which must not allocate) and core's writer.
// Little-endian, as every CUDA host is. Header-only, no allocation, no exceptions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vramdoc::trace {

inline constexpr char kMagic[8] = {'V', 'D', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr std::uint32_t kVersion = 3;        // written; readers take 1 to 3 (3: kind 8, pinned)
inline constexpr std::uint32_t kOldestVersion = 1;
inline constexpr std::size_t kFileHeaderBytes = 24;     // magic, u32 version, u32 pid, u64 start_unix_ns
inline constexpr std::size_t kRecordHeaderBytes = 4;    // u16 type, u16 payload bytes
inline constexpr std::size_t kEventPayloadBytes = 44;
inline constexpr std::size_t kFramePayloadBytes = 16;
inline constexpr std::size_t kModuleFixedBytesV1 = 24;  // bias, start, end; then the path, no terminating 0
inline constexpr std::size_t kModuleFixedBytes = 25;    // version 2: and u8 build-id length; then the id, the path
inline constexpr std::size_t kMaxModuleIdBytes = 64;    // elf_note.hpp's kMaxBuildIdBytes
inline constexpr std::size_t kMaxPathBytes = 4096;
inline constexpr std::size_t kMaxRecordBytes = kRecordHeaderBytes + kModuleFixedBytes + kMaxModuleIdBytes + kMaxPathBytes;
inline constexpr std::uint32_t kUnknownDevice = 0xFFFFFFFFu;

enum class RecordType : std::uint16_t { Module = 1, Frame = 2, Event = 3 };

// What happened: an allocation, a release, or an allocation the driver refused (an OOM attempt).
enum class Op : std::uint8_t { Alloc = 1, Free = 2, Failed = 3 };

// Which allocator call family; decides which addresses a release can match (docs/trace-format.md).
enum class MemKind : std::uint8_t {
  Device = 1,       // cuMemAlloc
  Pitch = 2,        // cuMemAllocPitch (size = pitch x height)
  Managed = 3,      // cuMemAllocManaged
  Async = 4,        // cuMemAllocAsync / cuMemAllocFromPoolAsync, cuMemFreeAsync
  VmmPhysical = 5,  // cuMemCreate / cuMemRelease: address is the allocation handle
  VmmMap = 6,       // cuMemMap / cuMemUnmap: a view of physical memory, not counted in bytes
  Pool = 7,         // cuMemPoolCreate / cuMemPoolDestroy: address is the pool handle, size 0
  Pinned = 8,       // version 3: cuMemAllocHost / cuMemHostAlloc, cuMemFreeHost: pinned host memory, not device bytes
};
inline constexpr std::uint8_t kMaxMemKind = 8;

// One allocation-related driver call, read in its API-exit callback.
struct EventRecord {
  std::uint64_t t_ns = 0;        // since the trace started (monotonic clock)
  std::uint64_t address = 0;     // device pointer, or a handle (VmmPhysical, Pool)
  std::uint64_t size_bytes = 0;  // 0 on releases: the reader knows the size from the allocation
  std::uint64_t stream = 0;      // CUstream handle value for stream-ordered calls, else 0
  std::uint32_t stack_id = 0;    // leaf of the call-stack prefix tree; 0 = no stack
  std::uint32_t device = kUnknownDevice;  // device ordinal
  Op op = Op::Alloc;
  MemKind kind = MemKind::Device;
  std::uint16_t api = 0;         // CUPTI driver callback id of the call, for diagnostics
  bool operator==(const EventRecord&) const = default;
};

// One node of the call-stack prefix tree: `ip` called from the stack `parent` (0 = root).
struct FrameRecord {
  std::uint32_t id = 0;      // > parent: a node is written after its parent
  std::uint32_t parent = 0;
  std::uint64_t ip = 0;      // return address in the traced process
  bool operator==(const FrameRecord&) const = default;
};

namespace detail {
inline unsigned char* put(unsigned char* out, const void* value, std::size_t bytes) {
  std::memcpy(out, value, bytes);
  return out + bytes;
}
inline unsigned char* put_record_header(unsigned char* out, RecordType type, std::size_t payload) {
  const auto t = static_cast<std::uint16_t>(type);
  const auto n = static_cast<std::uint16_t>(payload);
  out = put(out, &t, 2);
  return put(out, &n, 2);
}
// A module record's header and the fields both versions share: bias, start, end.
inline unsigned char* put_module_head(unsigned char* out, std::size_t payload, std::uint64_t load_bias,
                                      std::uint64_t start, std::uint64_t end) {
  out = put_record_header(out, RecordType::Module, payload);
  out = put(out, &load_bias, 8);
  out = put(out, &start, 8);
  return put(out, &end, 8);
}
}  // namespace detail

// Writes the file header into out (kFileHeaderBytes); returns the bytes written.
inline std::size_t put_file_header(unsigned char* out, std::uint32_t pid, std::uint64_t start_unix_ns) {
  unsigned char* p = detail::put(out, kMagic, sizeof kMagic);
  p = detail::put(p, &kVersion, 4);
  p = detail::put(p, &pid, 4);
  p = detail::put(p, &start_unix_ns, 8);
  return static_cast<std::size_t>(p - out);
}

// Writes one event record; returns the bytes written (kRecordHeaderBytes + kEventPayloadBytes).
inline std::size_t put_event(unsigned char* out, const EventRecord& e) {
  unsigned char* p = detail::put_record_header(out, RecordType::Event, kEventPayloadBytes);
  p = detail::put(p, &e.t_ns, 8);
  p = detail::put(p, &e.address, 8);
  p = detail::put(p, &e.size_bytes, 8);
  p = detail::put(p, &e.stream, 8);
  p = detail::put(p, &e.stack_id, 4);
  p = detail::put(p, &e.device, 4);
  p = detail::put(p, &e.op, 1);
  p = detail::put(p, &e.kind, 1);
  p = detail::put(p, &e.api, 2);
  return static_cast<std::size_t>(p - out);
}

// Writes one prefix-tree node; returns the bytes written.
inline std::size_t put_frame(unsigned char* out, const FrameRecord& f) {
  unsigned char* p = detail::put_record_header(out, RecordType::Frame, kFramePayloadBytes);
  p = detail::put(p, &f.id, 4);
  p = detail::put(p, &f.parent, 4);
  p = detail::put(p, &f.ip, 8);
  return static_cast<std::size_t>(p - out);
}

// Writes one loaded module, version 2: with its build-id (`id_bytes` 0 when it has none, cut at
// kMaxModuleIdBytes) and its path (cut at kMaxPathBytes); out needs kMaxRecordBytes.
inline std::size_t put_module(unsigned char* out, std::uint64_t load_bias, std::uint64_t start, std::uint64_t end,
                              const unsigned char* build_id, std::size_t id_bytes, const char* path,
                              std::size_t path_bytes) {
  if (path_bytes > kMaxPathBytes) path_bytes = kMaxPathBytes;
  if (id_bytes > kMaxModuleIdBytes) id_bytes = kMaxModuleIdBytes;
  const auto id_length = static_cast<std::uint8_t>(id_bytes);
  unsigned char* p = detail::put_module_head(out, kModuleFixedBytes + id_bytes + path_bytes, load_bias, start, end);
  p = detail::put(p, &id_length, 1);
  if (id_bytes) p = detail::put(p, build_id, id_bytes);
  p = detail::put(p, path, path_bytes);
  return static_cast<std::size_t>(p - out);
}

// The same record as version 1 wrote it (no build-id), for reading and writing old traces.
inline std::size_t put_module_v1(unsigned char* out, std::uint64_t load_bias, std::uint64_t start, std::uint64_t end,
                                 const char* path, std::size_t path_bytes) {
  if (path_bytes > kMaxPathBytes) path_bytes = kMaxPathBytes;
  unsigned char* p = detail::put_module_head(out, kModuleFixedBytesV1 + path_bytes, load_bias, start, end);
  p = detail::put(p, path, path_bytes);
  return static_cast<std::size_t>(p - out);
}

}  // namespace vramdoc::trace
