// The pickle reader's stack machine, without the objects: it follows the unpickler's stack
// exactly enough to check every opcode against it, and decides, as early as the layout allows,
// which container each value belongs to (docs/snapshots.md, "The pickle reader").
//
// The stack is kept as frames: the root, each open dict or list, each MARK. Values pushed above
// a frame are counted in that frame's region. The newest scalars of the top region stay pending
// (TUPLE1-3 may still fold them into a tuple); everything else has been handed to the emitter.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/snapshot/pickle.hpp"
#include "core/snapshot/pickle_emitter.hpp"
#include "core/snapshot/pickle_memo.hpp"

namespace vramdoc::snapshot::detail {

// A FIFO whose front is dropped often and whose length is mostly a handful: a vector with a
// moving head, compacted now and then (no allocation in the steady state).
template <class T>
class SmallQueue {
 public:
  T& emplace_back() {
    if (head_ >= 64 && head_ * 2 >= items_.size()) items_.erase(items_.begin(), items_.begin() + static_cast<long>(head_)), head_ = 0;
    return items_.emplace_back();
  }
  void push_back(const T& v) { emplace_back() = v; }
  void pop_front(std::size_t n) {
    head_ += n;
    if (head_ == items_.size()) clear();
  }
  void clear() { items_.clear(), head_ = 0; }
  std::size_t size() const { return items_.size() - head_; }
  bool empty() const { return size() == 0; }
  T& back() { return items_.back(); }
  const T& back() const { return items_.back(); }
  const T& operator[](std::size_t i) const { return items_[head_ + i]; }
  const T* begin() const { return items_.data() + head_; }
  const T* end() const { return items_.data() + items_.size(); }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

class Stack {
 public:
  // `error` receives the reason whenever a call returns false (naming the byte).
  Stack(PickleHandler& handler, const PickleLimits& limits, std::string& error);

  // One call per opcode; each returns false on an error.
  bool scalar(const PickleScalar& value, std::uint64_t offset);  // the text is copied
  bool begin(PickleContainer kind, std::uint64_t offset);        // EMPTY_DICT, EMPTY_LIST
  bool empty_tuple(std::uint64_t offset);
  bool mark(std::uint64_t offset);
  bool append(bool dict, std::uint64_t offset);   // APPEND (list), SETITEM (dict)
  bool appends(bool dict, std::uint64_t offset);  // APPENDS, SETITEMS
  bool tuple(std::uint64_t offset);               // TUPLE (to the MARK)
  bool tuple_n(std::size_t n, std::uint64_t offset);
  bool memoize(std::uint64_t index, std::uint64_t offset);
  std::uint64_t next_memo_index() const { return memo_.next_index(); }
  bool get(std::uint64_t index, std::uint64_t offset);
  bool stop(std::uint64_t offset);
  // Past max_held_bytes: reads the oldest doubtful container as finished.
  bool check_budget() { return !emitter_.over_budget() || guess(); }

  PickleStats stats() const;

 private:
  enum class Kind : std::uint8_t { Root, Dict, List, Mark };
  enum class Role : std::uint8_t { Open, Batch, Tuple };  // a MARK: batch of its container, or a tuple's
  static constexpr std::uint64_t kNoHold = ~0ull;
  struct Frame {
    Kind kind = Kind::Root;
    Role role = Role::Open;
    std::uint64_t count = 0;          // values in this frame's region (above it, below the next frame)
    std::uint64_t slot = kNoSlot;     // a container's memo slot
    std::uint64_t hold = kNoHold;     // a container whose region may not be its own
    // Python's picklers write items in batches of 1000 and a lone APPEND / SETITEM only for a
    // container's last item: after a shorter batch or a lone item, a container is complete.
    bool complete = false;
  };
  static constexpr std::uint64_t kBatchSize = 1000;
  enum class PendingKind : std::uint8_t { Scalar, Tuple, Ref };
  struct Pending {
    PendingKind kind = PendingKind::Scalar;
    PickleScalar value;               // Scalar; an interned text in place, another one in text_ at text_at
    std::uint64_t text_at = 0;
    std::size_t text_size = 0;
    std::uint64_t slot = kNoSlot;     // Tuple: its memo slot; Ref: the slot referred to
    std::size_t first = 0, items = 0; // Tuple: its scalars in tuple_items_
    std::uint64_t offset = 0;
  };

  bool push_value(bool scalar, std::uint64_t offset);
  bool push_above_container(bool scalar, std::uint64_t offset);
  bool doubtful(std::size_t frame) const;
  bool emit_pending(std::size_t keep);
  bool emit(const Pending& p);
  bool settle_mark_as_batch();
  bool finish_held(std::size_t frame);
  bool close_top(std::uint64_t offset);
  bool guess();
  std::size_t trailing_pending_scalars() const;
  PickleScalar view(const Pending& p) const;
  void add_pending(const PickleScalar& value, std::uint64_t offset);
  bool fail(std::uint64_t offset, const std::string& message) {
    error_ = at_byte(offset, message);
    return false;
  }

  const PickleLimits& limits_;
  std::string& error_;
  Memo memo_;
  Emitter emitter_;
  std::vector<Frame> frames_;
  SmallQueue<Pending> pending_;       // the newest values of the top region, not yet emitted
  std::vector<Pending> tuple_items_;  // the scalars of pending tuples
  std::string text_;                  // texts of pending scalars
  std::uint64_t guesses_ = 0;
};

}  // namespace vramdoc::snapshot::detail
