#include "core/timeline/sample_row.hpp"

#include <charconv>

namespace vramdoc::timeline {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

void skip_space(std::string_view s, std::size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
}

// A JSON number without a sign: 0 | [1-9][0-9]*, then .[0-9]+ and [eE][+-]?[0-9]+ optionally.
// Converted by from_chars, correctly rounded as the JSON reader's conversion is.
bool number(std::string_view s, std::size_t& i, double& out) {
  const std::size_t start = i;
  if (i >= s.size() || !digit(s[i])) return false;
  if (s[i] == '0') ++i;
  else
    while (i < s.size() && digit(s[i])) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (i >= s.size() || !digit(s[i])) return false;
    while (i < s.size() && digit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !digit(s[i])) return false;
    while (i < s.size() && digit(s[i])) ++i;
  }
  const auto r = std::from_chars(s.data() + start, s.data() + i, out);
  return r.ec == std::errc() && r.ptr == s.data() + i;
}

// A number or null at s[i].
bool scalar(std::string_view s, std::size_t& i, RowCell& cell) {
  if (s.substr(i, 4) == "null") {
    cell.kind = RowCell::Kind::Null;
    i += 4;
    return true;
  }
  cell.kind = RowCell::Kind::Number;
  return number(s, i, cell.number);
}

// "[a, b, ...]" at s[i], each value read by `on_value` (given the position, moving it past the value).
template <typename OnValue>
bool list(std::string_view s, std::size_t& i, OnValue on_value) {
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  skip_space(s, i);
  if (i < s.size() && s[i] == ']') return ++i, true;
  for (;;) {
    skip_space(s, i);
    if (!on_value(i)) return false;
    skip_space(s, i);
    if (i >= s.size()) return false;
    if (s[i] == ']') return ++i, true;
    if (s[i] != ',') return false;
    ++i;
  }
}

}  // namespace

bool parse_sample_row(std::string_view line, SampleRow& row) {
  row.cells.clear();
  row.items.clear();
  std::size_t i = 0;
  skip_space(line, i);
  const bool ok = list(line, i, [&](std::size_t& at) {
    RowCell cell;
    if (at < line.size() && line[at] == '[') {
      cell.kind = RowCell::Kind::List;
      cell.begin = static_cast<std::uint32_t>(row.items.size());
      const bool inner = list(line, at, [&](std::size_t& k) {
        RowCell item;
        if (!scalar(line, k, item)) return false;
        row.items.push_back(item);
        return true;
      });
      if (!inner) return false;
      cell.end = static_cast<std::uint32_t>(row.items.size());
    } else if (!scalar(line, at, cell)) {
      return false;
    }
    row.cells.push_back(cell);
    return true;
  });
  if (!ok) return false;
  skip_space(line, i);
  return i == line.size();
}

}  // namespace vramdoc::timeline
