#include "core/snapshot/pickle_stack.hpp"

namespace vramdoc::snapshot::detail {

Stack::Stack(PickleHandler& handler, const PickleLimits& limits)
    : limits_(limits), memo_(limits), emitter_(handler, memo_, limits) {
  frames_.push_back(Frame{});
}

PickleStats Stack::stats() const {
  PickleStats s;
  s.values = emitter_.values();
  s.memo_entries = memo_.stored();
  s.interned_bytes = memo_.interned_bytes();
  s.largest_hold_bytes = emitter_.largest_hold_bytes();
  s.guesses = guesses_;
  return s;
}

PickleScalar Stack::view(const Pending& p) const {
  PickleScalar v = p.value;
  if (v.intern != 0) v.text = memo_.text(v.intern).text;
  else if (p.text_size > 0) v.text = std::string_view(text_).substr(p.text_at, p.text_size);
  return v;
}

Stack::Pending Stack::make_pending(const PickleScalar& value, std::uint64_t offset) {
  Pending p;
  p.value = value;
  p.offset = offset;
  if (value.intern == 0 && !value.text.empty()) {
    p.text_at = text_.size();
    p.text_size = value.text.size();
    text_.append(value.text);
    p.value.text = {};
  }
  return p;
}

std::string Stack::emit(const Pending& p) {
  switch (p.kind) {
    case PendingKind::Scalar: return emitter_.scalar(view(p), p.offset);
    case PendingKind::Ref: return emitter_.ref(p.slot, p.offset);
    case PendingKind::Tuple: break;
  }
  if (auto e = emitter_.begin(PickleContainer::Tuple, p.offset); !e.empty()) return e;
  for (std::size_t i = p.first; i < p.first + p.items; ++i)
    if (auto e = emitter_.scalar(view(tuple_items_[i]), tuple_items_[i].offset); !e.empty()) return e;
  return emitter_.end(p.slot, p.offset);
}

std::string Stack::emit_pending(std::size_t keep) {
  if (pending_.size() <= keep) return {};
  const std::size_t n = pending_.size() - keep;
  for (std::size_t i = 0; i < n; ++i)
    if (auto e = emit(pending_[i]); !e.empty()) return e;
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(n));
  if (pending_.empty()) {
    text_.clear();
    tuple_items_.clear();
  }
  return {};
}

std::size_t Stack::trailing_pending_scalars() const {
  std::size_t n = 0;
  for (auto it = pending_.rbegin(); it != pending_.rend() && it->kind == PendingKind::Scalar; ++it) ++n;
  return n;
}

// A MARK right above a container whose values so far are all scalars turns out to open a batch
// of that container's items (not a tuple): they may go out now, but the newest three.
std::string Stack::settle_mark_as_batch() {
  frames_.back().role = Role::Batch;
  return emit_pending(3);
}

// The container `frame` (a doubtful one) is finished: its end goes where its hold is, and the
// values above it belong to the batch below.
std::string Stack::finish_held(std::size_t frame) {
  Frame c = frames_[frame];
  frames_.erase(frames_.begin() + static_cast<long>(frame));
  frames_[frame - 1].count += c.count;
  return emitter_.settle(c.hold, true, c.slot);
}

// The top frame is a container with nothing above it that has been taken by its parent.
std::string Stack::close_top(std::uint64_t offset) {
  const Frame c = frames_.back();
  frames_.pop_back();
  return emitter_.end(c.slot, offset);
}

std::string Stack::push_value(bool scalar, std::uint64_t offset) {
  if (!scalar || (!pending_.empty() && pending_.back().kind != PendingKind::Scalar))
    if (auto e = emit_pending(0); !e.empty()) return e;
  Frame& t = frames_.back();
  switch (t.kind) {
    case Kind::Root:  // more than one value only as scalars: an opcode that would use them (STACK_GLOBAL) is named then
      if (t.count > 0 && !scalar) return error(offset, "a second value at the top level");
      ++t.count;
      return {};
    case Kind::Mark:
      if (t.role == Role::Tuple && !scalar) return error(offset, "a tuple holding a container or a tuple: not read");
      if (t.role == Role::Open && !scalar)
        if (auto e = settle_mark_as_batch(); !e.empty()) return e;
      if (t.role != Role::Batch && pending_.size() >= limits_.max_pending)
        return error(offset, "more than " + std::to_string(limits_.max_pending) + " values after a MARK whose meaning is still open");
      ++t.count;
      return {};
    case Kind::Dict:
    case Kind::List: break;
  }
  return push_above_container(scalar, offset);
}

// Whether a value above container `i` may belong to its parent rather than to it: when the
// container sits in a batch (above a MARK), or in the region of a container that is itself in doubt.
bool Stack::doubtful(std::size_t i) const {
  const Frame& below = frames_[i - 1];
  return (below.kind == Kind::Mark && below.role == Role::Batch) ||
         ((below.kind == Kind::Dict || below.kind == Kind::List) && below.hold != kNoHold);
}

// A value pushed right above an open container c. Where c may be finished (doubtful), the value
// may be c's next item or its parent's: it is held back until the pickle says which, unless the
// layout settles it now (docs/snapshots.md).
std::string Stack::push_above_container(bool scalar, std::uint64_t offset) {
  const std::size_t i = frames_.size() - 1;
  Frame& c = frames_[i];
  if (!doubtful(i)) {
    ++c.count;  // c is its parent's only value in reach: whatever comes is c's own
    return {};
  }
  if (c.count == 0) {
    const Frame& below = frames_[i - 1];
    const bool at_value = below.kind == Kind::Mark && frames_[i - 2].kind == Kind::Dict && below.count % 2 == 0;
    if (!scalar && c.kind == Kind::Dict) {  // cannot be a key of c: c is finished
      if (auto e = close_top(offset); !e.empty()) return e;
      return push_value(scalar, offset);
    }
    if (!scalar && at_value) {  // cannot be the next key of c's parent: c's own
      c.count = 1;
      return {};
    }
    c.hold = emitter_.open_hold(offset);
    c.count = 1;
    return {};
  }
  if (c.hold == kNoHold) {
    ++c.count;
    return {};
  }
  // Can c still take all its region? A list takes one value, a dict a key and one value; TUPLE1-3
  // may yet fold up to three pending scalars into that one value.
  const std::uint64_t values = c.count + 1 - (c.kind == Kind::Dict ? 1 : 0);
  const std::uint64_t foldable = trailing_pending_scalars() + (scalar ? 1 : 0);
  if (values <= 1 || (values <= 3 && foldable >= values)) {
    ++c.count;
    return {};
  }
  if (auto e = finish_held(i); !e.empty()) return e;
  return push_value(scalar, offset);
}

std::string Stack::scalar(const PickleScalar& value, std::uint64_t offset) {
  if (auto e = push_value(true, offset); !e.empty()) return e;
  pending_.push_back(make_pending(value, offset));
  const Frame& t = frames_.back();
  if (t.kind != Kind::Mark || t.role == Role::Batch) return emit_pending(3);
  return {};
}

std::string Stack::begin(PickleContainer kind, std::uint64_t offset) {
  if (frames_.size() >= 2 * limits_.max_depth + 2) return error(offset, "containers nested deeper than " + std::to_string(limits_.max_depth));
  if (auto e = push_value(false, offset); !e.empty()) return e;
  if (auto e = emitter_.begin(kind, offset); !e.empty()) return e;
  Frame f;
  f.kind = kind == PickleContainer::Dict ? Kind::Dict : Kind::List;
  frames_.push_back(f);
  return {};
}

std::string Stack::empty_tuple(std::uint64_t offset) {
  if (auto e = push_value(false, offset); !e.empty()) return e;
  Pending p;
  p.kind = PendingKind::Tuple;
  p.first = tuple_items_.size();
  p.offset = offset;
  pending_.push_back(p);
  return {};
}

std::string Stack::mark(std::uint64_t offset) {
  if (frames_.size() >= 2 * limits_.max_depth + 2) return error(offset, "MARKs nested deeper than " + std::to_string(limits_.max_depth));
  Frame& t = frames_.back();
  if (t.kind == Kind::Mark && t.role == Role::Tuple) return error(offset, "a tuple inside a tuple: not read");
  if (t.kind == Kind::Mark && t.role == Role::Open)
    if (auto e = settle_mark_as_batch(); !e.empty()) return e;
  if (auto e = emit_pending(0); !e.empty()) return e;
  if (t.kind == Kind::Root && t.count > 0) return error(offset, "a second value at the top level");
  Frame m;
  m.kind = Kind::Mark;
  const bool container = frames_.back().kind == Kind::Dict || frames_.back().kind == Kind::List;
  m.role = container && frames_.back().count == 0 ? Role::Open : Role::Tuple;
  frames_.push_back(m);
  return {};
}

}  // namespace vramdoc::snapshot::detail
