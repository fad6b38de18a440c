// A streaming reader of Python pickles that hold plain data (protocols 2-5): dicts, lists,
// tuples of scalars, ints, floats, str, bytes, None, bool, with memo references and framing.
// It hands the values to a handler in document order (SAX style) and never builds an object
// tree; it never runs anything: every opcode that would import or call (GLOBAL, REDUCE, BUILD,
// ...) is an error naming its offset. Every size it keeps is bounded (PickleLimits).
//
// Pickles have no "end of container" opcode: a container ends when its parent takes it. The
// reader follows the layout Python's pickle module writes (docs/snapshots.md, "The pickle
// reader") and holds back the few events whose container is still open to doubt, up to
// max_held_bytes; past that it reads the container as finished and stops with an error if the
// file later says otherwise.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc::snapshot {

enum class PickleKind : std::uint8_t { None, Bool, Int, BigInt, Float, Str, Bytes };

// One scalar. `text` (Str as UTF-8 as written, Bytes) is valid only during the callback.
struct PickleScalar {
  PickleKind kind = PickleKind::None;
  std::int64_t integer = 0;  // Int; Bool: 0 or 1. BigInt (outside int64): 0
  double real = 0;           // Float
  std::string_view text;
  std::uint32_t intern = 0;  // a Str / Bytes the pickle memoized: the same id for the same text (1, 2, ...)
};

enum class PickleContainer : std::uint8_t { Dict, List, Tuple };

// The largest token a handler may give a container (tokens live in 30 bits of the memo).
inline constexpr std::uint32_t kMaxPickleToken = (1u << 30) - 1;

// Receives the values in document order. Inside a dict each key arrives through key(), then its
// value (a scalar, a container, or a reference). Each call returns true to go on; false stops the
// reading, with the reason in `error` (the reader adds the offset).
class PickleHandler {
 public:
  virtual ~PickleHandler() = default;
  virtual bool begin(PickleContainer kind) = 0;
  // The innermost open container ended. Set `token` (<= kMaxPickleToken) to what a later memo
  // reference to this container should pass to ref(); 0: the handler keeps nothing for it.
  virtual bool end(std::uint32_t& token) = 0;
  virtual bool key(const PickleScalar& key) = 0;
  virtual bool scalar(const PickleScalar& value) = 0;
  // A memo reference to a container that ended earlier, with the token end() gave it.
  virtual bool ref(std::uint32_t token) = 0;
  std::string error;  // why the last call returned false
};

struct PickleLimits {
  std::size_t max_depth = 64;                         // containers inside containers
  std::size_t max_string_bytes = 64u << 20;           // one str or bytes value
  std::uint64_t max_memo_entries = 1ull << 29;        // memo slots (4 bytes each)
  std::uint64_t max_interned_bytes = 512ull << 20;    // distinct memoized strings, together
  std::size_t max_pending = 1u << 16;                 // scalars after a MARK whose meaning is open
  std::size_t max_held_bytes = 16u << 20;             // events held while a container's end is open
};

struct PickleStats {
  int protocol = 0;
  std::uint64_t bytes = 0;           // read up to and including STOP
  std::uint64_t values = 0;          // scalars, containers and references delivered
  std::uint64_t memo_entries = 0;
  std::uint64_t interned_bytes = 0;
  std::uint64_t largest_hold_bytes = 0;  // the most ever held back at once
  std::uint64_t guesses = 0;         // holds past max_held_bytes, read as finished containers
};

// Reads one pickle from `in` (which must start with PROTO 2-5) and stops after its STOP opcode.
Result<PickleStats> read_pickle(std::istream& in, PickleHandler& handler, const PickleLimits& limits = {});

// The opcode's name as pickletools spells it ("GLOBAL", "SHORT_BINUNICODE"), or "unknown".
std::string_view pickle_opcode_name(unsigned char op);

}  // namespace vramdoc::snapshot
