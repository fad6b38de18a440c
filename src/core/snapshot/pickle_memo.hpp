// The pickle reader's memo: what each memo slot refers to, in 4 bytes a slot. Memoized strings
// are kept once per distinct text (the interned ids handlers see); containers keep the token
// their handler gave them; other scalars a copy.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/snapshot/pickle.hpp"

namespace vramdoc::snapshot::detail {

std::string at_byte(std::uint64_t offset, const std::string& message);

class Memo {
 public:
  enum Tag : std::uint32_t { kUnset = 0, kText = 1, kScalar = 2, kContainer = 3 };
  Memo(const PickleLimits& limits, std::string& error) : limits_(limits), error_(error) {}

  // The slot MEMOIZE fills: the number of distinct slots stored so far.
  std::uint64_t next_index() const { return stored_; }
  // Each returns false with the reason in the shared error string. put_text sets `intern` to the
  // text's id.
  bool put_text(std::uint64_t index, PickleKind kind, std::string_view text, std::uint32_t& intern);
  bool put_scalar(std::uint64_t index, const PickleScalar& value);
  bool put_container(std::uint64_t index);
  void set_token(std::uint64_t index, std::uint32_t token) { slot(index) = kContainer | (token << 2); }

  // The slot's tag and value (an intern id, a scalar index, a token); kUnset when never stored.
  Tag tag(std::uint64_t index) const { return index < capacity() && pages_[index / kPage] ? Tag(slot(index) & 3) : kUnset; }
  std::uint32_t value(std::uint64_t index) const { return slot(index) >> 2; }
  // A stored scalar (kScalar) and an interned text (kText) as a scalar the handler can take.
  PickleScalar scalar(std::uint32_t id) const { return scalars_[id]; }
  PickleScalar text(std::uint32_t intern) const;

  std::uint64_t stored() const { return stored_; }
  std::uint64_t interned_bytes() const { return interned_bytes_; }

 private:
  // Slots live in pages of 64Ki, allocated when first written (no reallocation, no copy; a
  // BINPUT far ahead costs one page, not the slots before it).
  static constexpr std::uint64_t kPage = 1u << 16;
  std::uint64_t capacity() const { return pages_.size() * kPage; }
  std::uint32_t& slot(std::uint64_t i) { return pages_[i / kPage][i % kPage]; }
  std::uint32_t slot(std::uint64_t i) const { return pages_[i / kPage][i % kPage]; }
  bool reserve(std::uint64_t index);
  const PickleLimits& limits_;
  std::string& error_;
  std::vector<std::unique_ptr<std::uint32_t[]>> pages_;
  std::uint64_t stored_ = 0;
  // Interned texts: the kind's byte, then the text. Ids start at 1.
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<const std::string*> texts_;
  std::uint64_t interned_bytes_ = 0;
  std::vector<PickleScalar> scalars_;  // numbers, None, bools (never with text)
};

}  // namespace vramdoc::snapshot::detail
