#include "core/snapshot/pickle_memo.hpp"

namespace vramdoc::snapshot::detail {

std::string at_byte(std::uint64_t offset, const std::string& message) {
  return "at byte " + std::to_string(offset) + ": " + message;
}

bool Memo::reserve(std::uint64_t index) {
  if (index >= limits_.max_memo_entries || index >= (1ull << 32)) {
    error_ = "memo slot " + std::to_string(index) + " is beyond the limit of " + std::to_string(limits_.max_memo_entries);
    return false;
  }
  if (index >= capacity()) pages_.resize(index / kPage + 1);
  if (!pages_[index / kPage]) pages_[index / kPage] = std::make_unique<std::uint32_t[]>(kPage);  // zeroed
  if (slot(index) == kUnset) ++stored_;
  return true;
}

bool Memo::put_text(std::uint64_t index, PickleKind kind, std::string_view text, std::uint32_t& intern) {
  if (!reserve(index)) return false;
  std::string key(1, static_cast<char>(kind));
  key.append(text);
  auto [it, added] = ids_.try_emplace(std::move(key), 0);
  if (added) {
    interned_bytes_ += text.size();
    if (interned_bytes_ > limits_.max_interned_bytes || texts_.size() >= (1u << 30) - 1) {
      ids_.erase(it);
      error_ = "the memoized strings exceed the limit of " + std::to_string(limits_.max_interned_bytes) + " bytes";
      return false;
    }
    texts_.push_back(&it->first);
    it->second = static_cast<std::uint32_t>(texts_.size());
  }
  intern = it->second;
  slot(index) = kText | (intern << 2);
  return true;
}

bool Memo::put_scalar(std::uint64_t index, const PickleScalar& value) {
  if (!reserve(index)) return false;
  if (scalars_.size() >= (1u << 30) - 1) {
    error_ = "too many memoized numbers";
    return false;
  }
  scalars_.push_back(value);
  slot(index) = kScalar | (static_cast<std::uint32_t>(scalars_.size() - 1) << 2);
  return true;
}

bool Memo::put_container(std::uint64_t index) {
  if (!reserve(index)) return false;
  slot(index) = kContainer;  // token 0 until the container's end is delivered
  return true;
}

PickleScalar Memo::text(std::uint32_t intern) const {
  const std::string& key = *texts_[intern - 1];
  PickleScalar s;
  s.kind = static_cast<PickleKind>(key[0]);
  s.text = std::string_view(key).substr(1);
  s.intern = intern;
  return s;
}

}  // namespace vramdoc::snapshot::detail
