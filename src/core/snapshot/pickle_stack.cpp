#include "core/snapshot/pickle_stack.hpp"

namespace vramdoc::snapshot::detail {

Stack::Stack(PickleHandler& handler, const PickleLimits& limits, std::string& error)
    : limits_(limits), error_(error), memo_(limits, error), emitter_(handler, memo_, limits, error) {
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
  if (p.text_size > 0) v.text = std::string_view(text_).substr(p.text_at, p.text_size);
  return v;
}

void Stack::add_pending(const PickleScalar& value, std::uint64_t offset) {
  Pending& p = pending_.emplace_back();
  p.value = value;
  p.offset = offset;
  if (value.intern == 0 && !value.text.empty()) {  // the input window moves on: keep a copy
    p.text_at = text_.size();
    p.text_size = value.text.size();
    text_.append(value.text);
    p.value.text = {};
  }
}

bool Stack::emit(const Pending& p) {
  switch (p.kind) {
    case PendingKind::Scalar: return emitter_.scalar(view(p), p.offset);
    case PendingKind::Ref: return emitter_.ref(p.slot, p.offset);
    case PendingKind::Tuple: break;
  }
  if (!emitter_.begin(PickleContainer::Tuple, p.offset)) return false;
  for (std::size_t i = p.first; i < p.first + p.items; ++i)
    if (!emitter_.scalar(view(tuple_items_[i]), tuple_items_[i].offset)) return false;
  return emitter_.end(p.slot, p.offset);
}

bool Stack::emit_pending(std::size_t keep) {
  if (pending_.size() <= keep) return true;
  const std::size_t n = pending_.size() - keep;
  for (std::size_t i = 0; i < n; ++i)
    if (!emit(pending_[i])) return false;
  pending_.pop_front(n);
  if (pending_.empty()) {
    text_.clear();
    tuple_items_.clear();
  }
  return true;
}

std::size_t Stack::trailing_pending_scalars() const {
  std::size_t n = 0;
  for (const Pending* p = pending_.end(); p != pending_.begin() && p[-1].kind == PendingKind::Scalar; --p) ++n;
  return n;
}

// A MARK right above a container whose values so far are all scalars turns out to open a batch
// of that container's items (not a tuple): they may go out now, but the newest three.
bool Stack::settle_mark_as_batch() {
  frames_.back().role = Role::Batch;
  return emit_pending(3);
}

// The container `frame` (a doubtful one) is finished: its end goes where its hold is, and the
// values above it belong to the region below.
bool Stack::finish_held(std::size_t frame) {
  const Frame c = frames_[frame];
  frames_.erase(frames_.begin() + static_cast<long>(frame));
  frames_[frame - 1].count += c.count;
  return emitter_.settle(c.hold, true, c.slot);
}

// The top frame is a container with nothing above it that has been taken by its parent.
bool Stack::close_top(std::uint64_t offset) {
  const Frame c = frames_.back();
  frames_.pop_back();
  return emitter_.end(c.slot, offset);
}

// Past the hold budget: the oldest doubtful container is read as finished.
bool Stack::guess() {
  while (emitter_.over_budget()) {
    std::size_t j = 1;
    while (j < frames_.size() && frames_[j].hold == kNoHold) ++j;
    if (j == frames_.size()) break;
    ++guesses_;
    if (!finish_held(j)) return false;
  }
  return true;
}

bool Stack::push_value(bool scalar, std::uint64_t offset) {
  if (!scalar || (!pending_.empty() && pending_.back().kind != PendingKind::Scalar))
    if (!emit_pending(0)) return false;
  Frame& t = frames_.back();
  switch (t.kind) {
    case Kind::Root:  // more than one value only as scalars: an opcode that would use them (STACK_GLOBAL) is named then
      if (t.count > 0 && !scalar) return fail(offset, "a second value at the top level");
      ++t.count;
      return true;
    case Kind::Mark:
      if (t.role == Role::Tuple && !scalar) return fail(offset, "a tuple holding a container or a tuple: not read");
      if (t.role == Role::Open && !scalar && !settle_mark_as_batch()) return false;
      if (t.role != Role::Batch && pending_.size() >= limits_.max_pending)
        return fail(offset, "more than " + std::to_string(limits_.max_pending) + " values after a MARK whose meaning is still open");
      ++t.count;
      return true;
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
bool Stack::push_above_container(bool scalar, std::uint64_t offset) {
  const std::size_t i = frames_.size() - 1;
  Frame& c = frames_[i];
  if (c.complete && c.count == 0 && doubtful(i)) return close_top(offset) && push_value(scalar, offset);
  if (!doubtful(i) || (c.count > 0 && c.hold == kNoHold)) {
    ++c.count;  // c is its parent's only value in reach, or already known to take these values
    return true;
  }
  if (c.count == 0) {
    const Frame& below = frames_[i - 1];
    const bool at_value = below.kind == Kind::Mark && frames_[i - 2].kind == Kind::Dict && below.count % 2 == 0;
    if (!scalar && c.kind == Kind::Dict) return close_top(offset) && push_value(scalar, offset);  // not a key: c is finished
    if (!scalar && at_value) {  // cannot be the next key of c's parent: c's own
      c.count = 1;
      return true;
    }
    c.hold = emitter_.open_hold(offset);
    c.count = 1;
    return true;
  }
  // Can c still take all its region? A list takes one value, a dict a key and one value; TUPLE1-3
  // may yet fold up to three pending scalars into that one value.
  const std::uint64_t values = c.count + 1 - (c.kind == Kind::Dict ? 1 : 0);
  const std::uint64_t foldable = trailing_pending_scalars() + (scalar ? 1 : 0);
  if (values <= 1 || (values <= 3 && foldable >= values)) {
    ++c.count;
    return true;
  }
  return finish_held(i) && push_value(scalar, offset);
}

bool Stack::scalar(const PickleScalar& value, std::uint64_t offset) {
  if (!push_value(true, offset)) return false;
  add_pending(value, offset);
  const Frame& t = frames_.back();
  return (t.kind == Kind::Mark && t.role != Role::Batch) || emit_pending(3);
}

bool Stack::begin(PickleContainer kind, std::uint64_t offset) {
  if (frames_.size() >= 2 * limits_.max_depth + 2) return fail(offset, "containers nested deeper than " + std::to_string(limits_.max_depth));
  if (!push_value(false, offset) || !emitter_.begin(kind, offset)) return false;
  Frame f;
  f.kind = kind == PickleContainer::Dict ? Kind::Dict : Kind::List;
  frames_.push_back(f);
  return true;
}

bool Stack::empty_tuple(std::uint64_t offset) {
  if (!push_value(false, offset)) return false;
  Pending& p = pending_.emplace_back();
  p.kind = PendingKind::Tuple;
  p.first = tuple_items_.size();
  p.offset = offset;
  return true;
}

bool Stack::mark(std::uint64_t offset) {
  if (frames_.size() >= 2 * limits_.max_depth + 2) return fail(offset, "MARKs nested deeper than " + std::to_string(limits_.max_depth));
  if (frames_.back().complete && frames_.back().count == 0 && doubtful(frames_.size() - 1) && !close_top(offset)) return false;
  const Frame& t = frames_.back();
  if (t.kind == Kind::Mark && t.role == Role::Tuple) return fail(offset, "a tuple inside a tuple: not read");
  if (t.kind == Kind::Mark && t.role == Role::Open && !settle_mark_as_batch()) return false;
  if (!emit_pending(0)) return false;
  if (t.kind == Kind::Root && t.count > 0) return fail(offset, "a second value at the top level");
  Frame m;
  m.kind = Kind::Mark;
  const bool container = t.kind == Kind::Dict || t.kind == Kind::List;
  m.role = container && t.count == 0 ? Role::Open : Role::Tuple;
  frames_.push_back(m);
  return true;
}

}  // namespace vramdoc::snapshot::detail
