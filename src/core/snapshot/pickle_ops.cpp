// The opcodes that take values into containers, build tuples, and use the memo.
#include "core/snapshot/pickle_stack.hpp"

namespace vramdoc::snapshot::detail {

namespace {
const char* const kLayout = "the pickle's layout is not one vramdoc reads (docs/snapshots.md, \"The pickle reader\")";
}

// APPEND / SETITEM: the one value (key and value) above a list (dict) go into it.
bool Stack::append(bool dict, std::uint64_t offset) {
  const Kind want = dict ? Kind::Dict : Kind::List;
  const std::uint64_t need = dict ? 2 : 1;
  const Frame& t = frames_.back();
  // The value taken may be an open container with nothing above it: it is finished now.
  if ((t.kind == Kind::Dict || t.kind == Kind::List) && t.count == 0 && frames_.size() >= 3) {
    const Frame& below = frames_[frames_.size() - 2];
    if (below.kind == want && below.count == need && !close_top(offset)) return false;
  }
  Frame& c = frames_.back();
  if (c.kind != want || c.count != need)
    return fail(offset, std::string(dict ? "SETITEM" : "APPEND") + " not under a " + (dict ? "dict with a key and a value" : "list with one value") + ": " + kLayout);
  if (!emit_pending(0)) return false;
  c.count = 0;
  c.complete = true;
  if (c.hold == kNoHold) return true;
  const std::uint64_t hold = c.hold;
  c.hold = kNoHold;
  return emitter_.settle(hold, false, kNoSlot);
}

// APPENDS / SETITEMS: everything above the topmost MARK goes into the container under it.
bool Stack::appends(bool dict, std::uint64_t offset) {
  const std::string op = dict ? "SETITEMS" : "APPENDS";
  std::size_t m = frames_.size() - 1;
  while (m > 0 && frames_[m].kind != Kind::Mark) --m;
  if (m == 0) return fail(offset, op + " without a MARK");
  if (frames_[m].role == Role::Tuple) return fail(offset, op + " closing a tuple's MARK: " + kLayout);
  if (!emit_pending(0)) return false;
  while (frames_.size() - 1 > m) {  // open containers above the MARK are finished: the batch takes them
    const std::size_t j = frames_.size() - 1;
    if (frames_[j].hold != kNoHold) {
      if (!finish_held(j)) return false;
    } else if (frames_[j].count > 0) {
      return fail(offset, op + " takes values that a container above its MARK should have had: " + kLayout);
    } else if (!close_top(offset)) {
      return false;
    }
  }
  if (frames_[m - 1].kind != (dict ? Kind::Dict : Kind::List))
    return fail(offset, op + " under a MARK that is not above a " + (dict ? "dict" : "list"));
  if (dict && frames_[m].count % 2 != 0) return fail(offset, "SETITEMS with a key and no value");
  frames_[m - 1].complete = frames_[m].count / (dict ? 2 : 1) < kBatchSize;
  frames_.pop_back();
  return true;
}

bool Stack::tuple(std::uint64_t offset) {
  const Frame& t = frames_.back();
  if (t.kind != Kind::Mark) return fail(offset, "TUPLE after a container or without a MARK: a tuple holding a container is not read");
  if (t.role == Role::Batch || trailing_pending_scalars() != pending_.size() || pending_.size() != t.count)
    return fail(offset, "a tuple holding a container or a tuple: not read");
  Pending p;
  p.kind = PendingKind::Tuple;
  p.first = tuple_items_.size();
  p.items = pending_.size();
  p.offset = offset;
  tuple_items_.insert(tuple_items_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  frames_.pop_back();
  if (!push_value(false, offset)) return false;
  pending_.push_back(p);
  return true;
}

bool Stack::tuple_n(std::size_t n, std::uint64_t offset) {
  Frame& t = frames_.back();
  if (t.kind == Kind::Mark && t.role == Role::Tuple) return fail(offset, "a tuple inside a tuple: not read");
  if (t.kind == Kind::Mark && t.role == Role::Open && !settle_mark_as_batch()) return false;
  if (trailing_pending_scalars() < n || t.count < n)
    return fail(offset, "TUPLE" + std::to_string(n) + " without " + std::to_string(n) + " scalars under it: a tuple holding a container is not read");
  if (!emit_pending(n)) return false;
  Pending p;
  p.kind = PendingKind::Tuple;
  p.first = tuple_items_.size();
  p.items = n;
  p.offset = offset;
  tuple_items_.insert(tuple_items_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  t.count -= n - 1;
  pending_.push_back(p);
  return true;
}

bool Stack::memoize(std::uint64_t index, std::uint64_t offset) {
  if (!pending_.empty()) {
    Pending& p = pending_.back();
    bool ok = false;
    if (p.kind == PendingKind::Scalar && (p.value.kind == PickleKind::Str || p.value.kind == PickleKind::Bytes)) {
      std::uint32_t intern = 0;
      ok = memo_.put_text(index, p.value.kind, view(p).text, intern);
      if (ok) p.value = memo_.text(intern), p.text_size = 0;  // the memo's copy lives on
    } else if (p.kind == PendingKind::Scalar) {
      ok = memo_.put_scalar(index, p.value);
    } else if (p.kind == PendingKind::Tuple && p.slot == kNoSlot) {
      p.slot = index;
      ok = memo_.put_container(index);
    } else {
      error_ = "memoizing an object twice: not read";
    }
    return ok || fail(offset, error_);
  }
  Frame& t = frames_.back();
  if ((t.kind != Kind::Dict && t.kind != Kind::List) || t.count != 0) return fail(offset, "memoizing with no value on top of the stack");
  if (t.slot != kNoSlot) return fail(offset, "memoizing an object twice: not read");
  t.slot = index;
  return memo_.put_container(index) || fail(offset, error_);
}

bool Stack::get(std::uint64_t index, std::uint64_t offset) {
  switch (memo_.tag(index)) {
    case Memo::kUnset: return fail(offset, "memo slot " + std::to_string(index) + " was never stored");
    case Memo::kText: return scalar(memo_.text(memo_.value(index)), offset);
    case Memo::kScalar: return scalar(memo_.scalar(memo_.value(index)), offset);
    case Memo::kContainer: break;
  }
  for (std::size_t j = frames_.size() - 1; j > 0; --j) {
    if (frames_[j].slot != index) continue;
    // A container never holds itself: one whose end was in doubt is finished now.
    bool ok = false;
    if (frames_[j].hold != kNoHold) ok = finish_held(j);
    else if (j == frames_.size() - 1 && frames_[j].count == 0 && doubtful(j)) ok = close_top(offset);
    else return fail(offset, "a container that holds itself: not read");
    if (!ok) return false;
    break;
  }
  for (const auto& p : pending_)
    if (p.kind == PendingKind::Tuple && p.slot == index) return fail(offset, "a reference to a tuple being built: not read");
  if (!push_value(false, offset)) return false;
  Pending& p = pending_.emplace_back();
  p.kind = PendingKind::Ref;
  p.slot = index;
  p.offset = offset;
  return true;
}

bool Stack::stop(std::uint64_t offset) {
  if (!emit_pending(0)) return false;
  const Frame& t = frames_.back();
  if (frames_.size() == 2 && (t.kind == Kind::Dict || t.kind == Kind::List) && t.count == 0 && !close_top(offset)) return false;
  if (frames_.size() != 1 || frames_[0].count != 1) return fail(offset, "STOP with unfinished values on the stack");
  return true;
}

}  // namespace vramdoc::snapshot::detail
