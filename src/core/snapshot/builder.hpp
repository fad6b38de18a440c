// Builds a Snapshot from the pickle reader's events: a state machine over the snapshot's schema
// (torch/cuda/memory.py, _snapshot). Keys it does not know are skipped with everything under them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/snapshot/model.hpp"
#include "core/snapshot/pickle.hpp"

namespace vramdoc::snapshot::detail {

class SnapshotBuilder : public PickleHandler {
 public:
  SnapshotBuilder(Snapshot& out, const SnapshotLimits& limits) : out_(out), limits_(limits) {}
  bool begin(PickleContainer kind) override;
  bool end(std::uint32_t& token) override;
  bool key(const PickleScalar& key) override;
  bool scalar(const PickleScalar& value) override;
  bool ref(std::uint32_t token) override;
  // After the pickle's end: whether the top level was a dict (else `error` says so).
  bool finish();

  // What a value is, from where it sits.
  enum class Role : std::uint8_t {
    Top, Segments, Segment, Blocks, Block, Frames, Frame, PoolId, Traces, Trace, Entry, Settings, Annotations,
    Annotation, HookOom, Skip
  };
  // The keys the schema knows.
  enum class Field : std::uint8_t {
    Unknown, Segments, DeviceTraces, AllocatorSettings, ExternalAnnotations, VramdocOom, Device, Address, TotalSize,
    AllocatedSize, ActiveSize, RequestedSize, Stream, SegmentType, SegmentPoolId, IsExpandable, Frames, Blocks, Size,
    State, Action, Addr, DeviceFree, TimeUs, Filename, Line, Name, RequestedBytes, DeviceAllocatedBytes,
    DeviceFreeBytes, Torch, Pid
  };

 private:
  struct Level {
    Role role = Role::Skip;
    Field field = Field::Unknown;  // a dict's current key
    std::string key;               // its text, where kept (settings, annotations)
    std::uint64_t items = 0;       // values seen (lists, tuples)
  };
  Role child_role(const Level& parent, PickleContainer kind, std::string& why) const;
  bool set(Role role, Field field, const PickleScalar& v);
  bool set_segment(Field field, const PickleScalar& v);
  bool set_block(Field field, const PickleScalar& v);
  bool set_entry(Field field, const PickleScalar& v);
  bool set_hook_oom(Field field, const PickleScalar& v);
  bool end_level(const Level& l, std::uint32_t& token);
  void use_stack(std::uint32_t stack);
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }
  Field field_of(const PickleScalar& key);
  std::uint32_t string_id(const PickleScalar& s);

  Snapshot& out_;
  const SnapshotLimits& limits_;
  std::vector<Level> levels_;
  bool top_seen_ = false;
  Segment segment_;
  Block block_;
  TraceEntry entry_;
  Frame frame_;
  std::vector<std::uint32_t> stack_;  // the frames list being read
  Annotation annotation_;
  std::uint64_t entries_ = 0;
  std::vector<std::uint8_t> fields_by_intern_;   // the reader's intern id -> Field + 1 (0: not looked up)
  std::vector<std::uint32_t> strings_by_intern_;  // the reader's intern id -> FrameTable string id + 1
};

}  // namespace vramdoc::snapshot::detail
