#include "core/snapshot/pickle_emitter.hpp"

#include <algorithm>

namespace vramdoc::snapshot::detail {

bool Emitter::fail(std::uint64_t offset, const std::string& message) {
  error_ = at_byte(offset, message);
  return false;
}

bool Emitter::begin(PickleContainer kind, std::uint64_t offset) {
  if (!holding()) return deliver_begin(kind, offset);
  Event e;
  e.type = Type::Begin;
  e.container = kind;
  e.offset = offset;
  hold(e);
  return true;
}

bool Emitter::end(std::uint64_t slot, std::uint64_t offset) {
  if (!holding()) return deliver_end(slot, offset);
  Event e;
  e.type = Type::End;
  e.slot = slot;
  e.offset = offset;
  hold(e);
  return true;
}

bool Emitter::scalar(const PickleScalar& value, std::uint64_t offset) {
  if (!holding()) return deliver_scalar(value, offset);
  Event e;
  e.value = value;
  e.offset = offset;
  if (value.intern == 0 && !value.text.empty()) {  // the text's storage may not outlive the call
    e.text_at = arena_.size();
    e.text_size = value.text.size();
    arena_.append(value.text);
    e.value.text = {};
  }
  hold(e);
  return true;
}

bool Emitter::ref(std::uint64_t slot, std::uint64_t offset) {
  if (!holding()) return deliver_ref(slot, offset);
  Event e;
  e.type = Type::Ref;
  e.slot = slot;
  e.offset = offset;
  hold(e);
  return true;
}

std::uint64_t Emitter::open_hold(std::uint64_t offset) {
  Event e;
  e.type = Type::Hold;
  e.offset = offset;
  hold(e);
  return base_ + held_.size() - 1;
}

void Emitter::hold(Event e) {
  held_.push_back(e);
  largest_held_ = std::max<std::uint64_t>(largest_held_, held_bytes());
}

bool Emitter::settle(std::uint64_t hold, bool finished, std::uint64_t slot) {
  Event& e = held_[hold - base_];
  e.hold = finished ? HoldState::Finished : HoldState::Own;
  e.slot = slot;
  return flush();
}

bool Emitter::flush() {
  while (head_ < held_.size()) {
    Event& e = held_[head_];
    if (e.type == Type::Hold && e.hold == HoldState::Open) break;
    if (e.text_size > 0) e.value.text = std::string_view(arena_).substr(e.text_at, e.text_size);
    ++head_;
    if (!deliver(e)) return false;
  }
  if (head_ == held_.size()) {
    base_ += held_.size();
    held_.clear();
    arena_.clear();
    head_ = 0;
  }
  return true;
}

bool Emitter::deliver(const Event& e) {
  switch (e.type) {
    case Type::Hold: return e.hold == HoldState::Finished ? deliver_end(e.slot, e.offset) : true;
    case Type::End: return deliver_end(e.slot, e.offset);
    case Type::Begin: return deliver_begin(e.container, e.offset);
    case Type::Scalar: return deliver_scalar(e.value, e.offset);
    case Type::Ref: return deliver_ref(e.slot, e.offset);
  }
  return true;
}

bool Emitter::deliver_begin(PickleContainer kind, std::uint64_t offset) {
  if (at_key()) return fail(offset, "a dict key that is a container: not read");
  if (!handler_.begin(kind)) return fail(offset, handler_.error);
  open_.push_back(Open{kind});
  ++values_;
  return true;
}

bool Emitter::deliver_end(std::uint64_t slot, std::uint64_t offset) {
  std::uint32_t token = 0;
  if (!handler_.end(token)) return fail(offset, handler_.error);
  if (token > kMaxPickleToken) return fail(offset, "the handler gave a token out of range");
  if (slot != kNoSlot) memo_.set_token(slot, token);
  open_.pop_back();
  if (!open_.empty()) ++open_.back().items;
  return true;
}

bool Emitter::deliver_scalar(const PickleScalar& v, std::uint64_t offset) {
  if (!(at_key() ? handler_.key(v) : handler_.scalar(v))) return fail(offset, handler_.error);
  if (!open_.empty()) ++open_.back().items;
  ++values_;
  return true;
}

bool Emitter::deliver_ref(std::uint64_t slot, std::uint64_t offset) {
  if (at_key()) return fail(offset, "a dict key that is a container: not read");
  if (!handler_.ref(memo_.value(slot))) return fail(offset, handler_.error);
  if (!open_.empty()) ++open_.back().items;
  ++values_;
  return true;
}

}  // namespace vramdoc::snapshot::detail
