#include "core/snapshot/builder.hpp"

#include <unordered_map>

namespace vramdoc::snapshot::detail {

namespace {

using Role = SnapshotBuilder::Role;
using Field = SnapshotBuilder::Field;

const std::unordered_map<std::string_view, Field>& field_table() {
  static const std::unordered_map<std::string_view, Field> t = {
      {"segments", Field::Segments}, {"device_traces", Field::DeviceTraces},
      {"allocator_settings", Field::AllocatorSettings}, {"external_annotations", Field::ExternalAnnotations},
      {"vramdoc_oom", Field::VramdocOom}, {"device", Field::Device}, {"address", Field::Address},
      {"total_size", Field::TotalSize}, {"allocated_size", Field::AllocatedSize}, {"active_size", Field::ActiveSize},
      {"requested_size", Field::RequestedSize}, {"stream", Field::Stream}, {"segment_type", Field::SegmentType},
      {"segment_pool_id", Field::SegmentPoolId}, {"is_expandable", Field::IsExpandable}, {"frames", Field::Frames},
      {"blocks", Field::Blocks}, {"size", Field::Size}, {"state", Field::State}, {"action", Field::Action},
      {"addr", Field::Addr}, {"device_free", Field::DeviceFree}, {"time_us", Field::TimeUs},
      {"filename", Field::Filename}, {"line", Field::Line}, {"name", Field::Name},
      {"requested_bytes", Field::RequestedBytes}, {"device_allocated_bytes", Field::DeviceAllocatedBytes},
      {"device_free_bytes", Field::DeviceFreeBytes}, {"torch", Field::Torch}, {"pid", Field::Pid}};
  return t;
}

const char* role_name(Role r) {
  switch (r) {
    case Role::Segment: return "segment";
    case Role::Block: return "block";
    case Role::Entry: return "trace entry";
    case Role::Frame: return "frame";
    case Role::HookOom: return "vramdoc_oom";
    default: return "value";
  }
}

// Text of a scalar for settings and annotations.
std::string as_text(const PickleScalar& v) {
  switch (v.kind) {
    case PickleKind::None: return "None";
    case PickleKind::Bool: return v.integer ? "True" : "False";
    case PickleKind::Int: return std::to_string(v.integer);
    case PickleKind::BigInt: return "(a large integer)";
    case PickleKind::Float: return std::to_string(v.real);
    case PickleKind::Str:
    case PickleKind::Bytes: return std::string(v.text.substr(0, 4096));
  }
  return {};
}

}  // namespace

SnapshotBuilder::Field SnapshotBuilder::field_of(const PickleScalar& key) {
  if (key.kind != PickleKind::Str) return Field::Unknown;
  if (key.intern != 0 && key.intern < fields_by_intern_.size() && fields_by_intern_[key.intern] != 0)
    return static_cast<Field>(fields_by_intern_[key.intern] - 1);
  const auto& t = field_table();
  const auto it = t.find(key.text);
  const Field f = it == t.end() ? Field::Unknown : it->second;
  if (key.intern != 0 && key.intern < (1u << 24)) {
    if (key.intern >= fields_by_intern_.size()) fields_by_intern_.resize(key.intern + 1, 0);
    fields_by_intern_[key.intern] = static_cast<std::uint8_t>(f) + 1;
  }
  return f;
}

std::uint32_t SnapshotBuilder::string_id(const PickleScalar& s) {
  if (s.intern != 0 && s.intern < strings_by_intern_.size() && strings_by_intern_[s.intern] != 0)
    return strings_by_intern_[s.intern] - 1;
  const std::uint32_t id = out_.frames.intern_string(s.text.substr(0, 4096));
  if (s.intern != 0 && s.intern < (1u << 28)) {
    if (s.intern >= strings_by_intern_.size()) strings_by_intern_.resize(s.intern + 1, 0);
    strings_by_intern_[s.intern] = id + 1;
  }
  return id;
}

SnapshotBuilder::Role SnapshotBuilder::child_role(const Level& p, PickleContainer kind, std::string& why) const {
  const bool dict = kind == PickleContainer::Dict, list = kind == PickleContainer::List;
  auto expect = [&](bool ok, Role r, const char* what) {
    if (!ok) why = std::string("expected ") + what + " in the snapshot's " + role_name(p.role);
    return r;
  };
  switch (p.role) {
    case Role::Top:
      switch (p.field) {
        case Field::Segments: return expect(list, Role::Segments, "a list of segments");
        case Field::DeviceTraces: return expect(list, Role::Traces, "a list of device traces");
        case Field::AllocatorSettings: return expect(dict, Role::Settings, "a dict of allocator settings");
        case Field::ExternalAnnotations: return expect(list, Role::Annotations, "a list of annotations");
        case Field::VramdocOom: return expect(dict, Role::HookOom, "a dict");
        default: return Role::Skip;
      }
    case Role::Segments: return expect(dict, Role::Segment, "a dict for each segment");
    case Role::Blocks: return expect(dict, Role::Block, "a dict for each block");
    case Role::Frames: return expect(dict, Role::Frame, "a dict for each frame");
    case Role::Traces: return expect(list, Role::Trace, "a list of trace entries for each device");
    case Role::Trace: return expect(dict, Role::Entry, "a dict for each trace entry");
    case Role::Annotations: return dict ? Role::Annotation : Role::Skip;
    case Role::Settings: return dict ? Role::Settings : Role::Skip;
    case Role::Segment:
      if (p.field == Field::Blocks) return expect(list, Role::Blocks, "a list of blocks");
      if (p.field == Field::SegmentPoolId) return dict ? Role::Skip : Role::PoolId;
      [[fallthrough]];
    case Role::Block:
    case Role::Entry:
      if (p.field == Field::Frames) return expect(list, Role::Frames, "a list of frames");
      return Role::Skip;
    default: return Role::Skip;
  }
}

bool SnapshotBuilder::begin(PickleContainer kind) {
  if (levels_.empty()) {
    if (top_seen_ || kind != PickleContainer::Dict) return fail("not a PyTorch memory snapshot: its top level is not a dict");
    top_seen_ = true;
    Level top;
    top.role = Role::Top;
    levels_.push_back(std::move(top));
    return true;
  }
  Level l;
  l.role = child_role(levels_.back(), kind, error);
  if (!error.empty()) return false;
  switch (l.role) {
    case Role::Segment:
      if (out_.segments.size() >= limits_.max_segments) return fail("more segments than the limit");
      segment_ = Segment{};
      segment_.first_block = out_.blocks.size();
      break;
    case Role::Block: block_ = Block{}; break;
    case Role::Entry: entry_ = TraceEntry{}; break;
    case Role::Frame: frame_ = Frame{}; break;
    case Role::Frames: stack_.clear(); break;
    case Role::Annotation: annotation_ = Annotation{}; break;
    case Role::Trace:
      if (out_.traces.size() >= limits_.max_devices) return fail("more device traces than the limit");
      out_.traces.emplace_back();
      break;
    case Role::Settings:
      if (levels_.back().role == Role::Settings) l.key = levels_.back().key + ".";
      break;
    default: break;
  }
  levels_.push_back(std::move(l));
  return true;
}

bool SnapshotBuilder::key(const PickleScalar& k) {
  Level& l = levels_.back();
  l.field = field_of(k);
  if (l.role == Role::Settings) {
    const auto dot = l.key.rfind('.');
    l.key = (dot == std::string::npos ? std::string() : l.key.substr(0, dot + 1)) + as_text(k);
  } else if (l.role == Role::Annotation) {
    l.key = as_text(k);
  } else if (l.role == Role::Top && l.field == Field::Unknown && out_.unknown_keys.size() < 32) {
    out_.unknown_keys.push_back(as_text(k));
  }
  return true;
}

bool SnapshotBuilder::end(std::uint32_t& token) {
  const Level l = std::move(levels_.back());
  levels_.pop_back();
  return end_level(l, token);
}

bool SnapshotBuilder::end_level(const Level& l, std::uint32_t& token) {
  switch (l.role) {
    case Role::Frame: {
      if (out_.frames.frames() >= limits_.max_frames) return fail("more distinct frames than the limit");
      const std::uint32_t id = out_.frames.intern_frame(frame_);
      stack_.push_back(id);
      token = ((id << 1) | 1u) + 1;
      return true;
    }
    case Role::Frames: {
      if (out_.frames.stacks() >= limits_.max_frames) return fail("more distinct stacks than the limit");
      const std::uint32_t id = out_.frames.intern_stack(stack_);
      token = (id << 1) + 1;
      use_stack(id);
      return true;
    }
    case Role::Block:
      if (out_.blocks.size() >= limits_.max_blocks) return fail("more blocks than the limit");
      out_.blocks.push_back(block_);
      ++segment_.block_count;
      return true;
    case Role::Segment: out_.segments.push_back(segment_); return true;
    case Role::Entry:
      if (entry_.action == Action::FreeCompleted) return ++out_.free_completed, true;  // not used by the analysis
      if (++entries_ > limits_.max_entries) return fail("more trace entries than the limit");
      return out_.traces.back().push_back(entry_) ||
             fail("a trace entry beyond what vramdoc stores (a size of 2^48 bytes or more, more than 2^24 distinct stacks, or 6 days from the first entry)");
    case Role::Annotation:
      if (out_.annotations.size() >= limits_.max_annotations) return fail("more annotations than the limit");
      out_.annotations.push_back(std::move(annotation_));
      return true;
    default: return true;
  }
}

void SnapshotBuilder::use_stack(std::uint32_t stack) {
  if (levels_.empty()) return;
  switch (levels_.back().role) {
    case Role::Segment: segment_.stack = stack; break;
    case Role::Block: block_.stack = stack; break;
    case Role::Entry: entry_.stack = stack; break;
    default: break;
  }
}

bool SnapshotBuilder::ref(std::uint32_t token) {
  if (levels_.empty()) return fail("a memo reference at the top level");
  const Level& l = levels_.back();
  const bool frame_token = token != 0 && ((token - 1) & 1u) != 0;
  if (l.role == Role::Frames) {
    if (!frame_token) return fail("a frames list with an entry that is not a frame");
    if (stack_.size() >= limits_.max_stack_depth) return fail("a stack deeper than the limit");
    stack_.push_back((token - 1) >> 1);
    return true;
  }
  const bool holds_frames = l.role == Role::Segment || l.role == Role::Block || l.role == Role::Entry;
  if (holds_frames && l.field == Field::Frames) {
    if (token == 0 || frame_token) return fail("'frames' refers to something that is not a frames list");
    use_stack((token - 1) >> 1);
    return true;
  }
  const bool own_records = l.role == Role::Segments || l.role == Role::Blocks || l.role == Role::Traces ||
                           l.role == Role::Trace || (l.role == Role::Top && l.field != Field::Unknown);
  return !own_records || fail("a memo reference where the snapshot holds its own records");  // else: under keys not read
}

bool SnapshotBuilder::scalar(const PickleScalar& v) {
  if (levels_.empty()) return fail("not a PyTorch memory snapshot: its top level is not a dict");
  Level& l = levels_.back();
  switch (l.role) {
    case Role::Frames: return fail("a frames list with an entry that is not a frame");
    case Role::Segments: case Role::Blocks: case Role::Traces: case Role::Trace:
      return fail(std::string("a scalar where the snapshot has a record (in its ") + role_name(l.role) + "s)");
    case Role::PoolId:
      if (l.items < 2 && v.kind == PickleKind::Int) segment_.pool_id[l.items] = v.integer;
      ++l.items;
      return true;
    case Role::Settings:
      if (out_.allocator_settings.size() < limits_.max_settings) out_.allocator_settings.emplace_back(l.key, as_text(v));
      return true;
    case Role::Annotation:
      if (l.key == "device" && v.kind == PickleKind::Int) annotation_.device = v.integer;
      else if (l.key == "time_us" && v.kind == PickleKind::Int) annotation_.time_us = v.integer;
      else if (annotation_.fields.size() < 64) annotation_.fields.emplace_back(l.key, as_text(v));
      return true;
    default: break;
  }
  if (l.role == Role::Skip || l.field == Field::Unknown) return true;
  return set(l.role, l.field, v);
}

bool SnapshotBuilder::finish() {
  return top_seen_ || fail("not a PyTorch memory snapshot: its top level is not a dict");
}

}  // namespace vramdoc::snapshot::detail
