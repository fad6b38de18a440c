// The pickle reader's output side: passes events to the handler in document order, or holds
// them back while a container's end is still open to doubt (a hold: a placeholder where the
// container's end goes if it turns out to be finished). Tracks the true nesting to tell dict
// keys from values, and gives containers' tokens to the memo as their ends are delivered.
// Calls return false on an error, which is then in the shared `error` string.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/snapshot/pickle.hpp"
#include "core/snapshot/pickle_memo.hpp"

namespace vramdoc::snapshot::detail {

inline constexpr std::uint64_t kNoSlot = ~0ull;

class Emitter {
 public:
  Emitter(PickleHandler& handler, Memo& memo, const PickleLimits& limits, std::string& error)
      : handler_(handler), memo_(memo), limits_(limits), error_(error) {}

  bool begin(PickleContainer kind, std::uint64_t offset);
  bool end(std::uint64_t slot, std::uint64_t offset);  // slot: the container's memo slot, or kNoSlot
  bool scalar(const PickleScalar& value, std::uint64_t offset);
  bool ref(std::uint64_t slot, std::uint64_t offset);

  // Opens a hold at the current position and returns its id.
  std::uint64_t open_hold(std::uint64_t offset);
  // Settles a hold: `finished` puts the end of the container (memo slot `slot`) at its place;
  // otherwise the held events were the container's own. Delivers what is no longer held.
  bool settle(std::uint64_t hold, bool finished, std::uint64_t slot);
  bool over_budget() const { return held_.size() > head_ && held_bytes() > limits_.max_held_bytes; }
  std::uint64_t values() const { return values_; }
  std::uint64_t largest_hold_bytes() const { return largest_held_; }

 private:
  enum class Type : std::uint8_t { Begin, End, Scalar, Ref, Hold };
  enum class HoldState : std::uint8_t { Open, Finished, Own };
  struct Event {
    Type type = Type::Scalar;
    PickleContainer container = PickleContainer::Dict;
    HoldState hold = HoldState::Open;
    PickleScalar value;            // Scalar; a held text lives in arena_ (value.text empty meanwhile)
    std::uint64_t text_at = 0;
    std::size_t text_size = 0;
    std::uint64_t slot = kNoSlot;  // End / Hold: the container's memo slot; Ref: the slot referred to
    std::uint64_t offset = 0;      // in the file, for errors
  };
  struct Open {
    PickleContainer kind;
    std::uint64_t items = 0;  // delivered values inside (keys and values count one each)
  };

  bool holding() const { return head_ < held_.size(); }
  bool at_key() const { return !open_.empty() && open_.back().kind == PickleContainer::Dict && open_.back().items % 2 == 0; }
  void hold(Event e);
  bool deliver(const Event& e);
  bool deliver_begin(PickleContainer kind, std::uint64_t offset);
  bool deliver_end(std::uint64_t slot, std::uint64_t offset);
  bool deliver_scalar(const PickleScalar& v, std::uint64_t offset);
  bool deliver_ref(std::uint64_t slot, std::uint64_t offset);
  bool fail(std::uint64_t offset, const std::string& message);
  bool flush();
  std::size_t held_bytes() const { return (held_.size() - head_) * sizeof(Event) + arena_.size(); }

  PickleHandler& handler_;
  Memo& memo_;
  const PickleLimits& limits_;
  std::string& error_;
  std::vector<Open> open_;      // the nesting of delivered events
  std::vector<Event> held_;     // events not yet delivered, from head_
  std::size_t head_ = 0;
  std::uint64_t base_ = 0;      // hold id of held_[0]
  std::string arena_;           // texts of held scalars
  std::uint64_t values_ = 0, largest_held_ = 0;
};

}  // namespace vramdoc::snapshot::detail
