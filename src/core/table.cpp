#include "core/table.hpp"

#include <algorithm>

namespace vramdoc {

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {  // a colour code (CSI): no width
      i += 2;
      while (i < text.size() && (text[i] < 0x40 || text[i] > 0x7e)) ++i;
      ++i;
      continue;
    }
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    // Three-byte sequences starting at U+1100 and above in the CJK blocks are double width.
    width += (len == 3 && c >= 0xe3 && c <= 0xed) || len == 4 ? 2 : 1;
    i += len;
  }
  return width;
}

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  while (align_.size() < headers_.size()) align_.push_back(align_.empty() ? Align::Left : Align::Right);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::add_rule() { rows_.emplace_back(); }

std::string TextTable::render(const std::string& indent) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = display_width(headers_[c]);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  std::size_t total = 0;
  for (std::size_t w : width) total += w;
  total += headers_.empty() ? 0 : 2 * (headers_.size() - 1);

  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - display_width(cells[c]), ' ');
      bool last = c + 1 == cells.size();
      if (align_[c] == Align::Right) out += pad + cells[c];
      else out += last ? cells[c] : cells[c] + pad;
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string rule = indent + std::string(total, '-') + "\n";
  std::string out = line(headers_) + rule;
  for (const auto& row : rows_) out += row.empty() ? rule : line(row);
  return out;
}

}  // namespace vramdoc
