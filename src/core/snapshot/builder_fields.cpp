// The snapshot builder's scalar fields: numbers and names of segments, blocks, trace entries,
// frames and vramdoc's OOM record, checked for type.
#include "core/snapshot/builder.hpp"

namespace vramdoc::snapshot::detail {

namespace {

using Field = SnapshotBuilder::Field;

// Sizes and addresses: 0 to 2^56 (64 PiB, beyond any device), so that sums of them stay exact.
bool unsigned_of(const PickleScalar& v, std::uint64_t& out) {
  if (v.kind != PickleKind::Int || v.integer < 0 || v.integer > (1ll << 56)) return false;
  out = static_cast<std::uint64_t>(v.integer);
  return true;
}

bool signed_of(const PickleScalar& v, std::int64_t& out) {
  if (v.kind == PickleKind::Bool || v.kind == PickleKind::Int) {
    out = v.integer;
    return true;
  }
  return false;
}

std::string bad_text(const char* record, const char* field, const char* what) {
  return std::string("the ") + record + "'s '" + field + "' is not " + what;
}

BlockState state_of(std::string_view s) {
  if (s == "active_allocated") return BlockState::ActiveAllocated;
  if (s == "active_pending_free") return BlockState::ActivePendingFree;
  if (s == "inactive") return BlockState::Inactive;
  return BlockState::Unknown;
}

}  // namespace

bool SnapshotBuilder::set(Role role, Field field, const PickleScalar& v) {
  switch (role) {
    case Role::Segment: return set_segment(field, v);
    case Role::Block: return set_block(field, v);
    case Role::Entry: return set_entry(field, v);
    case Role::HookOom: return set_hook_oom(field, v);
    case Role::Frame:
      if (field == Field::Filename && v.kind == PickleKind::Str) frame_.file = string_id(v);
      else if (field == Field::Name && v.kind == PickleKind::Str) frame_.name = string_id(v);
      else if (field == Field::Line && !signed_of(v, frame_.line)) return fail(bad_text("frame", "line", "an integer"));
      return true;
    default: return true;
  }
}

bool SnapshotBuilder::set_segment(Field field, const PickleScalar& v) {
  const char* r = "segment";
  switch (field) {
    case Field::Device: return signed_of(v, segment_.device) || fail(bad_text(r, "device", "an integer"));
    case Field::Address: return unsigned_of(v, segment_.address) || fail(bad_text(r, "address", "an integer from 0 to 2^56"));
    case Field::TotalSize: return unsigned_of(v, segment_.total_size) || fail(bad_text(r, "total_size", "an integer from 0 to 2^56"));
    case Field::AllocatedSize:
      return unsigned_of(v, segment_.allocated_size) || fail(bad_text(r, "allocated_size", "an integer from 0 to 2^56"));
    case Field::ActiveSize: return unsigned_of(v, segment_.active_size) || fail(bad_text(r, "active_size", "an integer from 0 to 2^56"));
    case Field::RequestedSize:
      return unsigned_of(v, segment_.requested_size) || fail(bad_text(r, "requested_size", "an integer from 0 to 2^56"));
    case Field::Stream: return signed_of(v, segment_.stream) || fail(bad_text(r, "stream", "an integer"));
    case Field::SegmentType: segment_.large = v.kind != PickleKind::Str || v.text != "small"; return true;
    case Field::IsExpandable: segment_.expandable = v.kind == PickleKind::Bool && v.integer != 0; return true;
    default: return true;
  }
}

bool SnapshotBuilder::set_block(Field field, const PickleScalar& v) {
  const char* r = "block";
  switch (field) {
    case Field::Address: return unsigned_of(v, block_.address) || fail(bad_text(r, "address", "an integer from 0 to 2^56"));
    case Field::Size: return unsigned_of(v, block_.size) || fail(bad_text(r, "size", "an integer from 0 to 2^56"));
    case Field::RequestedSize:
      return unsigned_of(v, block_.requested_size) || fail(bad_text(r, "requested_size", "an integer from 0 to 2^56"));
    case Field::State:
      if (v.kind != PickleKind::Str) return fail(bad_text(r, "state", "a string"));
      block_.state = state_of(v.text);
      return true;
    default: return true;
  }
}

bool SnapshotBuilder::set_entry(Field field, const PickleScalar& v) {
  const char* r = "trace entry";
  std::int64_t stream = 0;
  switch (field) {
    case Field::Action:
      if (v.kind != PickleKind::Str) return fail(bad_text(r, "action", "a string"));
      entry_.action = action_from_name(v.text);
      return true;
    case Field::Addr:
    case Field::DeviceFree: return unsigned_of(v, entry_.addr) || fail(bad_text(r, "addr", "an integer from 0 to 2^56"));
    case Field::Size: return unsigned_of(v, entry_.size) || fail(bad_text(r, "size", "an integer from 0 to 2^56"));
    case Field::TimeUs: return signed_of(v, entry_.time_us) || fail(bad_text(r, "time_us", "an integer"));
    case Field::Stream: {
      if (!signed_of(v, stream)) return fail(bad_text(r, "stream", "an integer"));
      std::size_t i = 0;
      while (i < out_.streams.size() && out_.streams[i] != stream) ++i;
      if (i == out_.streams.size() && i < 0xffff) out_.streams.push_back(stream);
      entry_.stream = static_cast<std::uint16_t>(std::min<std::size_t>(i, 0xffff));
      return true;
    }
    default: return true;
  }
}

bool SnapshotBuilder::set_hook_oom(Field field, const PickleScalar& v) {
  if (!out_.hook_oom) out_.hook_oom.emplace();
  HookOom& o = *out_.hook_oom;
  const char* r = "vramdoc_oom record";
  switch (field) {
    case Field::Device: return signed_of(v, o.device) || fail(bad_text(r, "device", "an integer"));
    case Field::RequestedBytes: return unsigned_of(v, o.requested_bytes) || fail(bad_text(r, "requested_bytes", "an integer from 0 to 2^56"));
    case Field::DeviceAllocatedBytes:
      return unsigned_of(v, o.device_allocated_bytes) || fail(bad_text(r, "device_allocated_bytes", "an integer from 0 to 2^56"));
    case Field::DeviceFreeBytes:
      return unsigned_of(v, o.device_free_bytes) || fail(bad_text(r, "device_free_bytes", "an integer from 0 to 2^56"));
    case Field::Torch: o.torch = std::string(v.text.substr(0, 64)); return true;
    case Field::Pid: return signed_of(v, o.pid) || fail(bad_text(r, "pid", "an integer"));
    default: return true;
  }
}

}  // namespace vramdoc::snapshot::detail
