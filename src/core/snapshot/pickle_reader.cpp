// read_pickle: the opcode loop. Each opcode is decoded from the input window and handed to the
// stack machine; opcodes that would import or call anything are refused by name.
#include <cstdio>
#include <cstring>

#include "core/snapshot/pickle.hpp"
#include "core/snapshot/pickle_input.hpp"
#include "core/snapshot/pickle_stack.hpp"

namespace vramdoc::snapshot {

namespace {

using detail::at_byte;

struct OpName {
  unsigned char op;
  const char* name;
};
constexpr OpName kNames[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"}, {'I', "INT"},
    {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"}, {'N', "NONE"}, {'P', "PERSID"},
    {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"},
    {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
    {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"}, {'r', "LONG_BINPUT"},
    {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"}, {'u', "SETITEMS"}, {'G', "BINFLOAT"},
    {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"},
    {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"}, {0x8b, "LONG4"},
    {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"}};

std::uint64_t little(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// LONG1 / LONG4: little-endian two's complement. Values outside int64 are BigInt.
PickleScalar long_value(const unsigned char* p, std::size_t n) {
  PickleScalar v;
  v.kind = PickleKind::Int;
  if (n == 0) return v;
  const bool negative = (p[n - 1] & 0x80) != 0;
  std::size_t used = n;  // drop sign-extension bytes
  while (used > 1 && p[used - 1] == (negative ? 0xff : 0x00) && ((p[used - 2] & 0x80) != 0) == negative) --used;
  if (used > 8) {
    v.kind = PickleKind::BigInt;
    return v;
  }
  std::uint64_t u = little(p, used);
  if (negative && used < 8) u |= ~0ull << (8 * used);
  v.integer = static_cast<std::int64_t>(u);
  return v;
}

class Reader {
 public:
  Reader(std::istream& in, PickleHandler& handler, const PickleLimits& limits)
      : in_(in), limits_(limits), stack_(handler, limits, error_) {}
  Result<PickleStats> run();

 private:
  bool step(unsigned char op, std::uint64_t at, bool& stop);
  bool text(PickleKind kind, std::size_t length_bytes, std::uint64_t at);
  bool number(unsigned char op, std::uint64_t at);
  bool refuse(unsigned char op, std::uint64_t at);
  const unsigned char* take(std::size_t n, std::uint64_t at) {
    const unsigned char* p = in_.take(n);
    if (!p) error_ = at_byte(at, "the file ends inside an opcode (truncated)");
    return p;
  }
  bool fail(std::uint64_t at, const std::string& message) {
    error_ = at_byte(at, message);
    return false;
  }

  detail::ByteWindow in_;
  const PickleLimits& limits_;
  std::string error_;
  detail::Stack stack_;
};

Result<PickleStats> Reader::run() {
  const unsigned char* head = in_.take(2);
  if (!head || head[0] != 0x80) return make_error("not a pickle: it does not start with the PROTO opcode (0x80)");
  if (head[1] < 2 || head[1] > 5) return make_error("pickle protocol " + std::to_string(head[1]) + ": vramdoc reads protocols 2 to 5");
  PickleStats stats;
  stats.protocol = head[1];
  for (bool stop = false; !stop;) {
    const std::uint64_t at = in_.offset();
    const unsigned char* op = in_.take(1);
    if (!op) return make_error(at_byte(at, "the file ends before the pickle's STOP opcode (truncated)"));
    if (!step(*op, at, stop) || !stack_.check_budget()) return make_error(error_);
  }
  const PickleStats s = stack_.stats();
  stats.bytes = in_.offset();
  stats.values = s.values;
  stats.memo_entries = s.memo_entries;
  stats.interned_bytes = s.interned_bytes;
  stats.largest_hold_bytes = s.largest_hold_bytes;
  stats.guesses = s.guesses;
  return stats;
}

bool Reader::text(PickleKind kind, std::size_t length_bytes, std::uint64_t at) {
  const unsigned char* p = take(length_bytes, at);
  if (!p) return false;
  const std::uint64_t n = little(p, length_bytes);
  if (n > limits_.max_string_bytes)
    return fail(at, "a string of " + std::to_string(n) + " bytes, beyond the limit of " + std::to_string(limits_.max_string_bytes));
  const unsigned char* s = take(static_cast<std::size_t>(n), at);
  if (!s) return false;
  PickleScalar v;
  v.kind = kind;
  v.text = std::string_view(reinterpret_cast<const char*>(s), static_cast<std::size_t>(n));
  return stack_.scalar(v, at);
}

bool Reader::number(unsigned char op, std::uint64_t at) {
  PickleScalar v;
  v.kind = PickleKind::Int;
  const unsigned char* p = nullptr;
  switch (op) {
    case 'J':
      if (!(p = take(4, at))) return false;
      v.integer = static_cast<std::int32_t>(static_cast<std::uint32_t>(little(p, 4)));
      break;
    case 'K':
      if (!(p = take(1, at))) return false;
      v.integer = p[0];
      break;
    case 'M':
      if (!(p = take(2, at))) return false;
      v.integer = static_cast<std::int64_t>(little(p, 2));
      break;
    case 'G': {
      if (!(p = take(8, at))) return false;
      std::uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];  // big-endian
      v.kind = PickleKind::Float;
      std::memcpy(&v.real, &bits, sizeof bits);
      break;
    }
    default: {  // LONG1, LONG4
      const std::size_t width = op == 0x8a ? 1 : 4;
      if (!(p = take(width, at))) return false;
      const std::uint64_t n = little(p, width);
      if (n > 4096) return fail(at, "an integer of " + std::to_string(n) + " bytes: beyond the limit of 4096");
      if (!(p = take(static_cast<std::size_t>(n), at))) return false;
      v = long_value(p, static_cast<std::size_t>(n));
    }
  }
  return stack_.scalar(v, at);
}

bool Reader::step(unsigned char op, std::uint64_t at, bool& stop) {
  const unsigned char* p = nullptr;
  PickleScalar v;
  switch (op) {
    case 0x95: return take(8, at) != nullptr;  // FRAME: a length hint, nothing to do
    case '.': stop = true; return stack_.stop(at);
    case '(': return stack_.mark(at);
    case '}': return stack_.begin(PickleContainer::Dict, at);
    case ']': return stack_.begin(PickleContainer::List, at);
    case ')': return stack_.empty_tuple(at);
    case 'a': return stack_.append(false, at);
    case 's': return stack_.append(true, at);
    case 'e': return stack_.appends(false, at);
    case 'u': return stack_.appends(true, at);
    case 't': return stack_.tuple(at);
    case 0x85: case 0x86: case 0x87: return stack_.tuple_n(op - 0x84u, at);
    case 'N': return stack_.scalar(v, at);
    case 0x88: case 0x89:
      v.kind = PickleKind::Bool;
      v.integer = op == 0x88 ? 1 : 0;
      return stack_.scalar(v, at);
    case 'J': case 'K': case 'M': case 'G': case 0x8a: case 0x8b: return number(op, at);
    case 'X': return text(PickleKind::Str, 4, at);
    case 0x8c: return text(PickleKind::Str, 1, at);
    case 0x8d: return text(PickleKind::Str, 8, at);
    case 'B': case 'T': return text(PickleKind::Bytes, 4, at);
    case 'C': case 'U': return text(PickleKind::Bytes, 1, at);
    case 0x8e: case 0x96: return text(PickleKind::Bytes, 8, at);
    case 0x94: return stack_.memoize(stack_.next_memo_index(), at);
    case 'q': case 'h':
      if (!(p = take(1, at))) return false;
      return op == 'q' ? stack_.memoize(p[0], at) : stack_.get(p[0], at);
    case 'r': case 'j':
      if (!(p = take(4, at))) return false;
      return op == 'r' ? stack_.memoize(little(p, 4), at) : stack_.get(little(p, 4), at);
    case 0x80: return fail(at, "a second PROTO opcode");
    default: return refuse(op, at);
  }
}

bool Reader::refuse(unsigned char op, std::uint64_t at) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op);
  const std::string name = std::string(pickle_opcode_name(op)) + " (" + hex + ")";
  static const std::string code = "cRbioQP\x81\x92\x93\x82\x83\x84";
  if (code.find(static_cast<char>(op)) != std::string::npos)
    return fail(at, "opcode " + name + " would import or call Python code: vramdoc reads plain data only and never runs anything");
  return fail(at, "opcode " + name + " is not read: vramdoc reads the plain containers Python's pickle writes at protocols 2-5");
}

}  // namespace

std::string_view pickle_opcode_name(unsigned char op) {
  for (const auto& n : kNames)
    if (n.op == op) return n.name;
  return "unknown";
}

Result<PickleStats> read_pickle(std::istream& in, PickleHandler& handler, const PickleLimits& limits) {
  Reader reader(in, handler, limits);
  return reader.run();
}

}  // namespace vramdoc::snapshot
