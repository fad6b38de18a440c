// A plain aligned text table: renderers build one and return its string.
#pragma once
#include <string>
#include <vector>

namespace vramdoc {

class TextTable {
 public:
  enum class Align { Left, Right };
  // Column headers; `align` per column (default: first left, the rest right).
  explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);
  // A horizontal rule between rows (e.g. before a total).
  void add_rule();
  // Rendered with two spaces between columns, a rule under the header, each line "\n"-ended.
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

// Display width of UTF-8 text (code points; East Asian wide characters count 2; colour codes, CSI
// escape sequences such as "\x1b[32m", count 0).
std::size_t display_width(const std::string& text);

}  // namespace vramdoc
