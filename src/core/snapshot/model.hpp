// A PyTorch CUDA memory snapshot as read (torch.cuda.memory._snapshot / _dump_snapshot, the
// snapshot taken at an OOM, or the one vramdoc's --trace-python hook writes at an OOM): the
// segments and their blocks at the moment of the dump, the allocator's trace per device, its
// settings and annotations. Stacks are interned (strings, frames and whole stacks once each) and
// trace entries are 24 bytes, so a 1 GB snapshot fits in a small share of its size.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/snapshot/pickle.hpp"

namespace vramdoc::snapshot {

// One Python (or C++) frame: ids of its file and function name in the FrameTable.
struct Frame {
  std::uint32_t file = 0, name = 0;
  std::int64_t line = 0;
  bool operator==(const Frame&) const = default;
};

// Strings, frames and stacks, each stored once. Id 0 is the empty string and the empty stack.
class FrameTable {
 public:
  FrameTable();
  std::uint32_t intern_string(std::string_view s);
  std::string_view string(std::uint32_t id) const { return *strings_[id]; }
  std::uint32_t intern_frame(const Frame& f);
  const Frame& frame(std::uint32_t id) const { return frames_[id]; }
  std::uint32_t intern_stack(std::span<const std::uint32_t> frame_ids);  // innermost first
  std::span<const std::uint32_t> stack(std::uint32_t id) const;
  std::size_t strings() const { return strings_.size(); }
  std::size_t frames() const { return frames_.size(); }
  std::size_t stacks() const { return stack_starts_.size() - 1; }
  std::uint64_t bytes() const;  // approximate memory held

 private:
  struct FrameHash {
    std::size_t operator()(const Frame& f) const;
  };
  std::unordered_map<std::string_view, std::uint32_t> string_ids_;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::uint64_t string_bytes_ = 0;
  std::unordered_map<Frame, std::uint32_t, FrameHash> frame_ids_;
  std::vector<Frame> frames_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> stack_ids_;  // content hash -> id
  std::vector<std::uint32_t> stack_frames_;
  std::vector<std::uint64_t> stack_starts_;  // stack i is stack_frames_[starts[i], starts[i+1])
};

// A vector in fixed chunks: it grows without copying and without a doubling's spare half.
template <class T>
class Chunked {
 public:
  static constexpr std::size_t kChunk = 1u << 15;
  void push_back(const T& v) {
    if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<T[]>(kChunk));
    chunks_.back()[size_ % kChunk] = v;
    ++size_;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  const T& back() const { return (*this)[size_ - 1]; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

enum class BlockState : std::uint8_t { ActiveAllocated, ActivePendingFree, Inactive, Unknown };

struct Block {
  std::uint64_t address = 0, size = 0, requested_size = 0;
  BlockState state = BlockState::Unknown;
  std::uint32_t stack = 0;  // where it was allocated (0: not recorded)
};

struct Segment {
  std::int64_t device = 0;
  std::uint64_t address = 0, total_size = 0, allocated_size = 0, active_size = 0, requested_size = 0;
  std::int64_t stream = 0;
  bool large = true;        // segment_type "large" (blocks over 1 MiB) or "small"
  bool expandable = false;  // is_expandable
  std::int64_t pool_id[2] = {0, 0};  // segment_pool_id: (0, 0) is the default pool
  std::uint32_t stack = 0;
  std::size_t first_block = 0, block_count = 0;  // its blocks in Snapshot::blocks, by address
};

enum class Action : std::uint8_t {
  Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree, SegmentMap, SegmentUnmap, Oom, Snapshot, Unknown
};
// PyTorch's name of the action ("alloc", "free_requested", ...); Unknown for any other.
Action action_from_name(std::string_view name);

// One entry of the allocator's trace.
struct TraceEntry {
  std::uint64_t addr = 0;  // for Oom: the device's free bytes (PyTorch's "device_free")
  std::uint64_t size = 0;
  std::int64_t time_us = 0;
  std::uint32_t stack = 0;
  std::uint16_t stream = 0;  // index into Snapshot::streams
  Action action = Action::Unknown;
};

// A device's trace, 24 bytes an entry: sizes below 2^48, fewer than 2^24 distinct stacks and
// 4096 streams, times within 2^39 us (6 days) of the first entry's.
class Trace {
 public:
  static constexpr std::uint64_t kMaxSize = (1ull << 48) - 1;
  static constexpr std::uint32_t kMaxStack = (1u << 24) - 1;
  static constexpr std::uint16_t kOtherStream = (1u << 12) - 1;
  // False (nothing stored) when the entry is outside those bounds.
  bool push_back(const TraceEntry& e);
  TraceEntry operator[](std::size_t i) const;
  TraceEntry back() const { return (*this)[size() - 1]; }
  std::size_t size() const { return packed_.size(); }
  bool empty() const { return packed_.empty(); }

 private:
  struct Packed {
    std::uint64_t addr;
    std::uint64_t size_action_stream;  // size (48 bits), action (4), stream (12)
    std::uint64_t time_stack;          // time from the first entry's (40 bits, signed), stack (24)
  };
  Chunked<Packed> packed_;
  std::int64_t base_us_ = 0;
};

// The OOM record vramdoc's --trace-python hook adds ("vramdoc_oom"): the observer's arguments.
struct HookOom {
  std::int64_t device = 0;
  std::uint64_t requested_bytes = 0, device_allocated_bytes = 0, device_free_bytes = 0;
  std::string torch;
  std::int64_t pid = 0;
};

struct Annotation {
  std::int64_t device = 0;
  std::int64_t time_us = 0;
  std::vector<std::pair<std::string, std::string>> fields;
};

struct Snapshot {
  FrameTable frames;
  std::vector<Segment> segments;
  std::vector<Block> blocks;
  std::vector<Trace> traces;                 // device_traces, by device index (free_completed entries not kept)
  std::uint64_t free_completed = 0;         // entries counted, not kept: the analysis does not use them
  std::vector<std::int64_t> streams;         // distinct stream values of the trace
  std::vector<std::pair<std::string, std::string>> allocator_settings;  // nested keys joined with "."
  std::vector<Annotation> annotations;
  std::optional<HookOom> hook_oom;
  std::vector<std::string> unknown_keys;     // top-level keys not read
  PickleStats pickle;
};

struct SnapshotLimits {
  std::uint64_t max_entries = 1ull << 32;      // trace entries, all devices
  std::uint64_t max_segments = 1u << 24;
  std::uint64_t max_blocks = 1u << 28;
  std::size_t max_stack_depth = 1u << 16;      // frames in one stack
  std::uint64_t max_frames = 1u << 24;         // distinct frames, and distinct stacks
  std::uint64_t max_string_bytes = 1ull << 30; // distinct file and function names, together
  std::size_t max_devices = 1024;
  std::size_t max_annotations = 1u << 20;
  std::size_t max_settings = 1u << 12;
  PickleLimits pickle;
};

// True when `head` starts like a pickle of protocol 2-5 (PROTO, then the version).
bool looks_like_pickle(std::string_view head);

// Reads a snapshot from a pickle stream; unknown keys are skipped. Errors name the byte.
Result<Snapshot> read_snapshot(std::istream& in, const SnapshotLimits& limits = {});
// The same from a file; the error names the file.
Result<Snapshot> read_snapshot_file(const std::string& path, const SnapshotLimits& limits = {});

}  // namespace vramdoc::snapshot
