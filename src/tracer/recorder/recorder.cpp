#include "tracer/recorder/recorder.hpp"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

#include "core/trace/elf_note.hpp"

namespace vramdoc::tracer {
namespace {

std::uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::size_t slot_of(std::uint32_t parent, std::uint64_t ip, std::size_t slots) {
  std::uint64_t h = ip * 0x9E3779B97F4A7C15ULL ^ (static_cast<std::uint64_t>(parent) * 0xC2B2AE3D27D4EB4FULL);
  h ^= h >> 29;
  return static_cast<std::size_t>(h) & (slots - 1);
}

// The executable PT_LOAD segments of one module: [start, end) in runtime addresses.
void exec_range(const dl_phdr_info* info, std::uint64_t* start, std::uint64_t* end) {
  *start = ~0ULL;
  *end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    if (lo < *start) *start = lo;
    if (lo + ph.p_memsz > *end) *end = lo + ph.p_memsz;
  }
}

// The GNU build-id in the module's notes, read from the loaded image (PT_NOTE lies inside a
// loaded segment), so symbolisation can later check it has the same file.
bool loaded_build_id(const dl_phdr_info* info, const unsigned char** id, std::size_t* bytes) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* notes = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    if (trace::find_build_id(notes, ph.p_memsz, id, bytes)) return true;
  }
  return false;
}

}  // namespace

int on_module(dl_phdr_info* info, std::size_t, void* arg) {
  auto* self = static_cast<Recorder*>(arg);
  std::uint64_t start = 0, end = 0;
  exec_range(info, &start, &end);
  if (start >= end) return 0;
  char exe[trace::kMaxPathBytes];
  const char* path = info->dlpi_name;
  std::size_t length = 0;
  if (path == nullptr || path[0] == '\0') {  // the main program
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
    length = n > 0 ? static_cast<std::size_t>(n) : 0;
    path = exe;
  } else {
    while (path[length] != '\0') ++length;
  }
  std::lock_guard lock(self->mutex_);
  for (std::size_t i = 0; i < self->module_count_; ++i)
    if (self->module_starts_[i] == start) return 0;
  if (self->module_count_ == Recorder::kMaxModules) return 0;
  self->module_starts_[self->module_count_++] = start;
  const unsigned char* id = nullptr;
  std::size_t id_bytes = 0;
  if (!loaded_build_id(info, &id, &id_bytes)) id_bytes = 0;
  unsigned char record[trace::kMaxRecordBytes];
  self->append_locked(record, trace::put_module(record, info->dlpi_addr, start, end, id, id_bytes, path, length));
  return 0;
}

Recorder::~Recorder() { close(); }

bool Recorder::open(const char* dir) {
  char path[trace::kMaxPathBytes];
  const int pid = static_cast<int>(getpid());
  if (std::snprintf(path, sizeof path, "%s/trace.%d.vdt", dir, pid) >= static_cast<int>(sizeof path)) return false;
  void* slots = mmap(nullptr, kSlots * sizeof(Slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slots == MAP_FAILED) return false;
  // Private, and never through a link planted at the predictable name (docs/security.md).
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) { munmap(slots, kSlots * sizeof(Slot)); return false; }
  {
    std::lock_guard lock(mutex_);
    slots_ = static_cast<Slot*>(slots);
    fd_ = fd;
    start_ns_ = clock_ns(CLOCK_MONOTONIC);
    unsigned char header[trace::kFileHeaderBytes];
    append_locked(header, trace::put_file_header(header, static_cast<std::uint32_t>(pid), clock_ns(CLOCK_REALTIME)));
  }
  flush();
  return true;
}

std::uint64_t Recorder::now_ns() const { return clock_ns(CLOCK_MONOTONIC) - start_ns_; }

void Recorder::record(trace::EventRecord event, const std::uint64_t* ips, int depth) {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return;
  event.stack_id = intern_locked(ips, depth);
  unsigned char bytes[trace::kRecordHeaderBytes + trace::kEventPayloadBytes];
  append_locked(bytes, trace::put_event(bytes, event));
}

// Walks the tree from the outermost frame in, adding missing nodes (and writing them).
std::uint32_t Recorder::intern_locked(const std::uint64_t* ips, int depth) {
  std::uint32_t parent = 0;
  for (int i = depth - 1; i >= 0; --i) {
    std::size_t s = slot_of(parent, ips[i], kSlots);
    while (slots_[s].id != 0 && !(slots_[s].parent == parent && slots_[s].ip == ips[i])) s = (s + 1) & (kSlots - 1);
    if (slots_[s].id == 0) {
      if (next_id_ > kMaxNodes) return parent;  // full: keep the outer frames only
      slots_[s] = Slot{ips[i], parent, next_id_++};
      unsigned char bytes[trace::kRecordHeaderBytes + trace::kFramePayloadBytes];
      append_locked(bytes, trace::put_frame(bytes, trace::FrameRecord{slots_[s].id, parent, ips[i]}));
    }
    parent = slots_[s].id;
  }
  return parent;
}

void Recorder::append_locked(const unsigned char* bytes, std::size_t n) {
  if (fd_ < 0) return;
  if (used_ + n > kBufferBytes) write_locked();
  for (std::size_t i = 0; i < n; ++i) buffer_[used_ + i] = bytes[i];
  used_ += n;
}

void Recorder::write_locked() {
  std::size_t done = 0;
  while (done < used_) {
    const ssize_t n = ::write(fd_, buffer_ + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // disk full or closed: drop, never block the program
    done += static_cast<std::size_t>(n);
  }
  used_ = 0;
}

// Called without mutex_ held: dl_iterate_phdr takes the loader lock, and a thread inside dlopen
// may be waiting for mutex_ (an allocation from a constructor); on_module takes mutex_ itself.
void Recorder::record_modules() {
  std::lock_guard lock(modules_mutex_);
  if (fd_ < 0) return;
  unsigned long long loads = 0;  // dlpi_adds: how many modules were ever loaded
  dl_iterate_phdr([](dl_phdr_info* info, std::size_t, void* out) {
    *static_cast<unsigned long long*>(out) = info->dlpi_adds;
    return 1;
  }, &loads);
  if (loads == loads_seen_) return;
  loads_seen_ = loads;
  dl_iterate_phdr(on_module, this);
}

void Recorder::flush() {
  record_modules();
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) write_locked();
}

void Recorder::close() {
  if (fd_ < 0) return;
  flush();
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool module_range(const void* address, std::uint64_t* start, std::uint64_t* end) {
  struct Query {
    std::uint64_t address, start, end;
    bool found;
  } q{reinterpret_cast<std::uint64_t>(address), 0, 0, false};
  dl_iterate_phdr([](dl_phdr_info* info, std::size_t, void* arg) {
    auto* query = static_cast<Query*>(arg);
    std::uint64_t lo = 0, hi = 0;
    exec_range(info, &lo, &hi);
    if (query->address < lo || query->address >= hi) return 0;
    *query = Query{query->address, lo, hi, true};
    return 1;
  }, &q);
  *start = q.start;
  *end = q.end;
  return q.found;
}

// Call-stack capture with the C++ runtime's unwinder (.eh_frame), safe in any thread.
namespace {

struct Walk {
  std::uint64_t* out;
  int max_depth;
  int depth;
};

_Unwind_Reason_Code step(_Unwind_Context* context, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  const auto ip = static_cast<std::uint64_t>(_Unwind_GetIP(context));
  if (ip == 0 || walk->depth >= walk->max_depth) return _URC_END_OF_STACK;
  walk->out[walk->depth++] = ip;
  return _URC_NO_REASON;
}

}  // namespace

int capture_stack(std::uint64_t* out, int max_depth) {
  Walk walk{out, max_depth, 0};
  _Unwind_Backtrace(step, &walk);
  return walk.depth;
}

}  // namespace vramdoc::tracer
