#include "core/style.hpp"

namespace vramdoc {

std::string Style::paint(const std::string& text, Tone tone) const {
  if (!color || text.empty()) return text;
  const char* code = tone == Tone::Good ? "\x1b[32m" : tone == Tone::Warn ? "\x1b[33m" : "\x1b[1;31m";
  return code + text + "\x1b[0m";
}

}  // namespace vramdoc
