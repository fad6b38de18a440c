#include "core/snapshot/model.hpp"

#include <algorithm>

namespace vramdoc::snapshot {

namespace {
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}
}  // namespace

std::size_t FrameTable::FrameHash::operator()(const Frame& f) const {
  return static_cast<std::size_t>(mix(mix(f.file, f.name), static_cast<std::uint64_t>(f.line)));
}

FrameTable::FrameTable() {
  intern_string("");
  stack_starts_ = {0, 0};  // stack 0: empty
}

std::uint32_t FrameTable::intern_string(std::string_view s) {
  if (auto it = string_ids_.find(s); it != string_ids_.end()) return it->second;
  strings_.push_back(std::make_unique<std::string>(s));
  const auto id = static_cast<std::uint32_t>(strings_.size() - 1);
  string_ids_.emplace(*strings_.back(), id);
  string_bytes_ += s.size();
  return id;
}

std::uint32_t FrameTable::intern_frame(const Frame& f) {
  auto [it, added] = frame_ids_.try_emplace(f, static_cast<std::uint32_t>(frames_.size()));
  if (added) frames_.push_back(f);
  return it->second;
}

std::uint32_t FrameTable::intern_stack(std::span<const std::uint32_t> ids) {
  if (ids.empty()) return 0;
  std::uint64_t h = ids.size();
  for (auto id : ids) h = mix(h, id);
  auto [lo, hi] = stack_ids_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const auto s = stack(it->second);
    if (std::equal(s.begin(), s.end(), ids.begin(), ids.end())) return it->second;
  }
  stack_frames_.insert(stack_frames_.end(), ids.begin(), ids.end());
  stack_starts_.push_back(stack_frames_.size());
  const auto id = static_cast<std::uint32_t>(stack_starts_.size() - 2);
  stack_ids_.emplace(h, id);
  return id;
}

std::span<const std::uint32_t> FrameTable::stack(std::uint32_t id) const {
  const auto b = stack_starts_[id], e = stack_starts_[id + 1];
  return {stack_frames_.data() + b, static_cast<std::size_t>(e - b)};
}

std::uint64_t FrameTable::bytes() const {
  return string_bytes_ + strings_.size() * 64 + frames_.size() * (sizeof(Frame) + 32) + stack_frames_.size() * 4 +
         stack_starts_.size() * (8 + 24);
}

bool Trace::push_back(const TraceEntry& e) {
  if (packed_.empty()) base_us_ = e.time_us;
  const std::int64_t t = e.time_us - base_us_;
  constexpr std::int64_t kSpan = 1ll << 39;
  if (e.size > kMaxSize || e.stack > kMaxStack || t >= kSpan || t < -kSpan) return false;
  const std::uint64_t stream = std::min<std::uint64_t>(e.stream, kOtherStream);
  packed_.push_back(Packed{e.addr, e.size | (std::uint64_t(e.action) << 48) | (stream << 52),
                           (static_cast<std::uint64_t>(t) << 24) | e.stack});
  return true;
}

TraceEntry Trace::operator[](std::size_t i) const {
  const Packed& p = packed_[i];
  TraceEntry e;
  e.addr = p.addr;
  e.size = p.size_action_stream & kMaxSize;
  e.action = static_cast<Action>((p.size_action_stream >> 48) & 15);
  e.stream = static_cast<std::uint16_t>(p.size_action_stream >> 52);
  e.time_us = base_us_ + (static_cast<std::int64_t>(p.time_stack) >> 24);  // arithmetic shift keeps the sign
  e.stack = static_cast<std::uint32_t>(p.time_stack & kMaxStack);
  return e;
}

Action action_from_name(std::string_view n) {
  static constexpr std::pair<std::string_view, Action> kActions[] = {
      {"alloc", Action::Alloc}, {"free_requested", Action::FreeRequested}, {"free_completed", Action::FreeCompleted},
      {"segment_alloc", Action::SegmentAlloc}, {"segment_free", Action::SegmentFree}, {"segment_map", Action::SegmentMap},
      {"segment_unmap", Action::SegmentUnmap}, {"oom", Action::Oom}, {"snapshot", Action::Snapshot}};
  for (const auto& [name, a] : kActions)
    if (name == n) return a;
  return Action::Unknown;
}

}  // namespace vramdoc::snapshot
