// The tracer's recording half, free of CUPTI so tests can drive it: a prefix tree of call
// stacks, a fixed buffer and the module map, written to DIR/trace.<pid>.vdt.
// No exceptions, no allocation after open(); every member is safe from any thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/trace/format.hpp"

struct dl_phdr_info;

namespace vramdoc::tracer {

// Up to this many frames of a stack are kept (the innermost ones).
inline constexpr int kMaxStackDepth = 64;

class Recorder {
 public:
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();

  // Creates DIR/trace.<pid>.vdt and writes its header and the loaded modules; false on failure.
  bool open(const char* dir);
  bool is_open() const { return fd_ >= 0; }
  // Nanoseconds since open(), on the monotonic clock.
  std::uint64_t now_ns() const;
  // Records `event` with its call stack (`ips`, innermost first; depth 0 = none).
  void record(trace::EventRecord event, const std::uint64_t* ips, int depth);
  // Records newly loaded modules, then writes the buffer out.
  void flush();
  // Flushes and closes the file; later calls record nothing.
  void close();
  // Prefix-tree nodes so far (bounded: a full tree keeps stacks' outer frames only).
  std::uint32_t stack_nodes() const { return next_id_ - 1; }

 private:
  struct Slot {
    std::uint64_t ip;
    std::uint32_t parent;
    std::uint32_t id;  // 0 = empty
  };
  static constexpr std::size_t kBufferBytes = 1 << 20;
  static constexpr std::size_t kSlots = 1 << 18;             // 4 MiB, mapped lazily
  static constexpr std::uint32_t kMaxNodes = kSlots / 4 * 3;
  static constexpr std::size_t kMaxModules = 2048;

  std::uint32_t intern_locked(const std::uint64_t* ips, int depth);
  void append_locked(const unsigned char* bytes, std::size_t n);
  void write_locked();
  void record_modules();
  friend int on_module(::dl_phdr_info*, std::size_t, void*);

  std::mutex mutex_;          // the buffer, the tree, the file
  std::mutex modules_mutex_;  // record_modules(); never held by record()
  int fd_ = -1;
  std::uint64_t start_ns_ = 0;
  unsigned char buffer_[kBufferBytes];
  std::size_t used_ = 0;
  Slot* slots_ = nullptr;
  std::uint32_t next_id_ = 1;
  std::uint64_t module_starts_[kMaxModules];
  std::size_t module_count_ = 0;
  unsigned long long loads_seen_ = 0;
};

// Fills `out` with up to `max_depth` return addresses of the calling thread, innermost first.
int capture_stack(std::uint64_t* out, int max_depth);
// The executable address range [*start, *end) of the module holding `address`; false if none.
bool module_range(const void* address, std::uint64_t* start, std::uint64_t* end);

}  // namespace vramdoc::tracer
