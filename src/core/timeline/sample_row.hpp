// A sample line's values read without building a JSON tree: the reader's fast path for the lines
// that are nearly all of a long recording ([t, bytes, ..., [series], [gpu_used]]). It accepts
// only the plain form (numbers without a sign, null, one level of lists of those); anything else
// is left to the JSON reader, which decides and words the error, so both paths give the same
// timeline and the same errors.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace vramdoc::timeline {

struct RowCell {
  enum class Kind : unsigned char { Number, Null, List };
  Kind kind = Kind::Null;
  double number = 0;              // Number: the value, as a JSON reader converts it
  std::uint32_t begin = 0, end = 0;  // List: its items, items[begin, end) (Number or Null)
};

struct SampleRow {
  std::vector<RowCell> cells;  // the top-level values
  std::vector<RowCell> items;  // the lists' values
};

// Fills `row` from `line` when it is of the plain form; false otherwise (`row` is then unspecified).
bool parse_sample_row(std::string_view line, SampleRow& row);

}  // namespace vramdoc::timeline
