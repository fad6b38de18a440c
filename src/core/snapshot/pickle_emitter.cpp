#include "core/snapshot/pickle_emitter.hpp"

#include <algorithm>

namespace vramdoc::snapshot::detail {

std::string Emitter::begin(PickleContainer kind, std::uint64_t offset) {
  Event e;
  e.type = Type::Begin;
  e.container = kind;
  e.offset = offset;
  return hold_or_deliver(e);
}

std::string Emitter::end(std::uint64_t slot, std::uint64_t offset) {
  Event e;
  e.type = Type::End;
  e.slot = slot;
  e.offset = offset;
  return hold_or_deliver(e);
}

std::string Emitter::scalar(const PickleScalar& value, std::uint64_t offset) {
  Event e;
  e.type = Type::Scalar;
  e.value = value;
  e.offset = offset;
  return hold_or_deliver(e);
}

std::string Emitter::ref(std::uint64_t slot, std::uint64_t offset) {
  Event e;
  e.type = Type::Ref;
  e.slot = slot;
  e.offset = offset;
  return hold_or_deliver(e);
}

std::uint64_t Emitter::open_hold(std::uint64_t offset) {
  Event e;
  e.type = Type::Hold;
  e.offset = offset;
  held_.push_back(e);
  ++open_holds_;
  return base_ + held_.size() - 1;
}

std::string Emitter::settle(std::uint64_t hold, bool finished, std::uint64_t slot) {
  Event& e = held_[hold - base_];
  e.hold = finished ? HoldState::Finished : HoldState::Own;
  e.slot = slot;
  --open_holds_;
  return flush();
}

std::string Emitter::hold_or_deliver(Event e) {
  if (head_ == held_.size()) return deliver(e);
  if (e.type == Type::Scalar && e.value.intern == 0 && !e.value.text.empty()) {
    e.text_at = arena_.size();
    e.text_size = e.value.text.size();
    arena_.append(e.value.text);
    e.value.text = {};
  }
  held_.push_back(e);
  largest_held_ = std::max<std::uint64_t>(largest_held_, held_bytes());
  return {};
}

std::string Emitter::flush() {
  while (head_ < held_.size()) {
    Event& e = held_[head_];
    if (e.type == Type::Hold && e.hold == HoldState::Open) break;
    if (e.text_size > 0) e.value.text = std::string_view(arena_).substr(e.text_at, e.text_size);
    ++head_;
    if (auto err = deliver(e); !err.empty()) return err;
  }
  if (head_ == held_.size()) {
    base_ += held_.size();
    held_.clear();
    arena_.clear();
    head_ = 0;
  }
  return {};
}

std::string Emitter::deliver_end(std::uint64_t slot, std::uint64_t offset) {
  std::uint32_t token = 0;
  if (auto err = handler_.end(token); !err.empty()) return at_byte(offset, err);
  if (token > kMaxPickleToken) return at_byte(offset, "the handler gave a token out of range");
  if (slot != kNoSlot) memo_.set_token(slot, token);
  open_.pop_back();
  if (!open_.empty()) ++open_.back().items;
  return {};
}

std::string Emitter::deliver(const Event& e) {
  const bool at_key = !open_.empty() && open_.back().kind == PickleContainer::Dict && open_.back().items % 2 == 0;
  std::string err;
  switch (e.type) {
    case Type::Hold:
      if (e.hold == HoldState::Finished) return deliver_end(e.slot, e.offset);
      return {};
    case Type::End: return deliver_end(e.slot, e.offset);
    case Type::Begin:
      if (at_key) return at_byte(e.offset, "a dict key that is a container: not read");
      err = handler_.begin(e.container);
      if (err.empty()) open_.push_back(Open{e.container});
      break;
    case Type::Scalar:
      err = at_key ? handler_.key(e.value) : handler_.scalar(e.value);
      if (err.empty() && !open_.empty()) ++open_.back().items;
      break;
    case Type::Ref:
      if (at_key) return at_byte(e.offset, "a dict key that is a container: not read");
      err = handler_.ref(memo_.value(e.slot));
      if (err.empty() && !open_.empty()) ++open_.back().items;
      break;
  }
  ++values_;
  return err.empty() ? err : at_byte(e.offset, err);
}

}  // namespace vramdoc::snapshot::detail
