// The opcodes that take values into containers, build tuples, and use the memo.
#include "core/snapshot/pickle_stack.hpp"

namespace vramdoc::snapshot::detail {

namespace {
const char* const kLayout = "the pickle's layout is not one vramdoc reads (docs/snapshots.md, \"The pickle reader\")";
}

// APPEND / SETITEM: the one value (key and value) above a list (dict) go into it.
std::string Stack::append(bool dict, std::uint64_t offset) {
  const Kind want = dict ? Kind::Dict : Kind::List;
  const std::uint64_t need = dict ? 2 : 1;
  const char* op = dict ? "SETITEM" : "APPEND";
  const Frame& t = frames_.back();
  // The value taken may be an open container with nothing above it: it is finished now.
  if ((t.kind == Kind::Dict || t.kind == Kind::List) && t.count == 0 && frames_.size() >= 3) {
    const Frame& below = frames_[frames_.size() - 2];
    if (below.kind == want && below.count == need)
      if (auto e = close_top(offset); !e.empty()) return e;
  }
  Frame& c = frames_.back();
  if (c.kind != want || c.count != need) return error(offset, std::string(op) + " not under a " + (dict ? "dict with a key and a value" : "list with one value") + ": " + kLayout);
  if (auto e = emit_pending(0); !e.empty()) return e;
  if (c.hold != kNoHold) {
    const std::uint64_t hold = c.hold;
    c.hold = kNoHold;
    c.count = 0;
    return emitter_.settle(hold, false, kNoSlot);
  }
  c.count = 0;
  return {};
}

// APPENDS / SETITEMS: everything above the topmost MARK goes into the container under it.
std::string Stack::appends(bool dict, std::uint64_t offset) {
  const char* op = dict ? "SETITEMS" : "APPENDS";
  std::size_t m = frames_.size() - 1;
  while (m > 0 && frames_[m].kind != Kind::Mark) --m;
  if (m == 0) return error(offset, std::string(op) + " without a MARK");
  if (frames_[m].role == Role::Tuple) return error(offset, std::string(op) + " closing a tuple's MARK: " + kLayout);
  if (auto e = emit_pending(0); !e.empty()) return e;
  while (frames_.size() - 1 > m) {  // open containers above the MARK are finished: the batch takes them
    const std::size_t j = frames_.size() - 1;
    if (frames_[j].hold != kNoHold) {
      if (auto e = finish_held(j); !e.empty()) return e;
    } else if (frames_[j].count > 0) {
      return error(offset, std::string(op) + " takes values that a container above its MARK should have had: " + kLayout);
    } else if (auto e = close_top(offset); !e.empty()) {
      return e;
    }
  }
  const Frame& container = frames_[m - 1];
  const Kind want = dict ? Kind::Dict : Kind::List;
  if (container.kind != want) return error(offset, std::string(op) + " under a MARK that is not above a " + (dict ? "dict" : "list"));
  if (dict && frames_[m].count % 2 != 0) return error(offset, "SETITEMS with a key and no value");
  frames_.pop_back();
  return {};
}

std::string Stack::tuple(std::uint64_t offset) {
  const Frame& t = frames_.back();
  if (t.kind != Kind::Mark) return error(offset, "TUPLE after a container or without a MARK: a tuple holding a container is not read");
  if (t.role == Role::Batch || trailing_pending_scalars() != pending_.size() || pending_.size() != t.count)
    return error(offset, "a tuple holding a container or a tuple: not read");
  Pending p;
  p.kind = PendingKind::Tuple;
  p.first = tuple_items_.size();
  p.items = pending_.size();
  p.offset = offset;
  tuple_items_.insert(tuple_items_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  frames_.pop_back();
  if (auto e = push_value(false, offset); !e.empty()) return e;
  pending_.push_back(p);
  return {};
}

std::string Stack::tuple_n(std::size_t n, std::uint64_t offset) {
  Frame& t = frames_.back();
  if (t.kind == Kind::Mark && t.role == Role::Tuple) return error(offset, "a tuple inside a tuple: not read");
  if (t.kind == Kind::Mark && t.role == Role::Open)
    if (auto e = settle_mark_as_batch(); !e.empty()) return e;
  if (trailing_pending_scalars() < n || t.count < n)
    return error(offset, "TUPLE" + std::to_string(n) + " without " + std::to_string(n) + " scalars under it: a tuple holding a container is not read");
  if (auto e = emit_pending(n); !e.empty()) return e;
  Pending p;
  p.kind = PendingKind::Tuple;
  p.first = tuple_items_.size();
  p.items = n;
  p.offset = offset;
  tuple_items_.insert(tuple_items_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  t.count -= n - 1;
  pending_.push_back(p);
  return {};
}

std::string Stack::memoize(std::uint64_t index, std::uint64_t offset) {
  if (!pending_.empty()) {
    Pending& p = pending_.back();
    std::string e;
    if (p.kind == PendingKind::Scalar && (p.value.kind == PickleKind::Str || p.value.kind == PickleKind::Bytes)) {
      std::uint32_t intern = 0;
      e = memo_.put_text(index, p.value.kind, view(p).text, intern);
      p.value.intern = intern;
    } else if (p.kind == PendingKind::Scalar) {
      e = memo_.put_scalar(index, view(p));
    } else if (p.kind == PendingKind::Tuple && p.slot == kNoSlot) {
      p.slot = index;
      e = memo_.put_container(index);
    } else {
      e = "memoizing an object twice: not read";
    }
    return e.empty() ? e : error(offset, e);
  }
  Frame& t = frames_.back();
  if ((t.kind != Kind::Dict && t.kind != Kind::List) || t.count != 0) return error(offset, "memoizing with no value on top of the stack");
  if (t.slot != kNoSlot) return error(offset, "memoizing an object twice: not read");
  t.slot = index;
  if (auto e = memo_.put_container(index); !e.empty()) return error(offset, e);
  return {};
}

std::string Stack::get(std::uint64_t index, std::uint64_t offset) {
  switch (memo_.tag(index)) {
    case Memo::kUnset: return error(offset, "memo slot " + std::to_string(index) + " was never stored");
    case Memo::kText: return scalar(memo_.text(memo_.value(index)), offset);
    case Memo::kScalar: return scalar(memo_.scalar(memo_.value(index)), offset);
    case Memo::kContainer: break;
  }
  for (std::size_t j = frames_.size() - 1; j > 0; --j) {
    if (frames_[j].slot != index) continue;
    // A container never holds itself: one whose end was in doubt is finished now.
    std::string e;
    if (frames_[j].hold != kNoHold) e = finish_held(j);
    else if (j == frames_.size() - 1 && frames_[j].count == 0 && doubtful(j)) e = close_top(offset);
    else e = error(offset, "a container that holds itself: not read");
    if (!e.empty()) return e;
    break;
  }
  for (const auto& p : pending_)
    if (p.kind == PendingKind::Tuple && p.slot == index) return error(offset, "a reference to a tuple being built: not read");
  if (auto e = push_value(false, offset); !e.empty()) return e;
  Pending p;
  p.kind = PendingKind::Ref;
  p.slot = index;
  p.offset = offset;
  pending_.push_back(p);
  return {};
}

std::string Stack::stop(std::uint64_t offset) {
  if (auto e = emit_pending(0); !e.empty()) return e;
  const Frame& t = frames_.back();
  if (frames_.size() == 2 && (t.kind == Kind::Dict || t.kind == Kind::List) && t.count == 0)
    if (auto e = close_top(offset); !e.empty()) return e;
  if (frames_.size() != 1 || frames_[0].count != 1) return error(offset, "STOP with unfinished values on the stack");
  return {};
}

std::string Stack::check_budget() {
  while (emitter_.over_budget()) {
    std::size_t j = 1;
    while (j < frames_.size() && frames_[j].hold == kNoHold) ++j;
    if (j == frames_.size()) break;
    ++guesses_;
    if (auto e = finish_held(j); !e.empty()) return e;
  }
  return {};
}

}  // namespace vramdoc::snapshot::detail
