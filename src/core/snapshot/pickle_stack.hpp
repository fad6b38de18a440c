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

class Stack {
 public:
  Stack(PickleHandler& handler, const PickleLimits& limits);

  // One call per opcode; each returns "" or an error naming the byte.
  std::string scalar(const PickleScalar& value, std::uint64_t offset);  // text is copied
  std::string begin(PickleContainer kind, std::uint64_t offset);        // EMPTY_DICT, EMPTY_LIST
  std::string empty_tuple(std::uint64_t offset);
  std::string mark(std::uint64_t offset);
  std::string append(bool dict, std::uint64_t offset);   // APPEND (list), SETITEM (dict)
  std::string appends(bool dict, std::uint64_t offset);  // APPENDS, SETITEMS
  std::string tuple(std::uint64_t offset);               // TUPLE (to the MARK)
  std::string tuple_n(std::size_t n, std::uint64_t offset);
  std::string memoize(std::uint64_t index, std::uint64_t offset);
  std::uint64_t next_memo_index() const { return memo_.next_index(); }
  std::string get(std::uint64_t index, std::uint64_t offset);
  std::string stop(std::uint64_t offset);
  // Past max_held_bytes: reads the oldest doubtful container as finished.
  std::string check_budget();

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
  };
  enum class PendingKind : std::uint8_t { Scalar, Tuple, Ref };
  struct Pending {
    PendingKind kind = PendingKind::Scalar;
    PickleScalar value;               // Scalar; text in text_ at text_at unless interned
    std::uint64_t text_at = 0;
    std::size_t text_size = 0;
    std::uint64_t slot = kNoSlot;     // Tuple: its memo slot; Ref: the slot referred to
    std::size_t first = 0, items = 0; // Tuple: its scalars in tuple_items_
    std::uint64_t offset = 0;
  };

  std::string push_value(bool scalar, std::uint64_t offset);
  std::string push_above_container(bool scalar, std::uint64_t offset);
  bool doubtful(std::size_t frame) const;
  std::string emit_pending(std::size_t keep);
  std::string emit(const Pending& p);
  std::string settle_mark_as_batch();
  std::string finish_held(std::size_t frame);
  std::string close_top(std::uint64_t offset);
  std::string pop_to_value(std::uint64_t offset);
  std::size_t trailing_pending_scalars() const;
  PickleScalar view(const Pending& p) const;
  Pending make_pending(const PickleScalar& value, std::uint64_t offset);
  std::string error(std::uint64_t offset, const std::string& message) const { return at_byte(offset, message); }

  const PickleLimits& limits_;
  Memo memo_;
  Emitter emitter_;
  std::vector<Frame> frames_;
  std::vector<Pending> pending_;      // the newest values of the top region, not yet emitted
  std::vector<Pending> tuple_items_;  // the scalars of pending tuples
  std::string text_;                  // texts of pending scalars
  std::uint64_t guesses_ = 0;
};

}  // namespace vramdoc::snapshot::detail
