#include "cli/style.hpp"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace vramdoc::cli {

namespace {

ColorMode g_mode = ColorMode::Auto;

// The tone of a verdict word: problems red, healthy green, undecided yellow.
Tone verdict_tone(const std::string& word) {
  if (word == "stable" || word == "plateau") return Tone::Good;
  if (word == "inconclusive") return Tone::Warn;
  return Tone::Bad;
}

// Paints every whole-cell occurrence of `word` in a table line (two spaces or the line's edge around it).
std::string paint_cells(std::string line, const std::string& word, Tone tone, const Style& style) {
  for (std::size_t at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    const bool left = at == 0 || (at >= 2 && line.compare(at - 2, 2, "  ") == 0);
    const std::size_t end = at + word.size();
    const bool right = end == line.size() || line.compare(end, 2, "  ") == 0;
    if (!left || !right) continue;
    const std::string painted = style.paint(word, tone);
    line.replace(at, word.size(), painted);
    at += painted.size() - 1;
  }
  return line;
}

std::string highlight_line(const std::string& line, const Style& style) {
  if (line.starts_with("FITS on ")) return style.paint("FITS", Tone::Good) + line.substr(4);
  if (line.starts_with("DOES NOT FIT on ")) return style.paint("DOES NOT FIT", Tone::Bad) + line.substr(12);
  const std::string verdict = "  verdict: ";
  if (line.starts_with(verdict)) {
    const auto colon = line.find(':', verdict.size());
    if (colon == std::string::npos) return line;
    const std::string word = line.substr(verdict.size(), colon - verdict.size());
    return verdict + style.paint(word, verdict_tone(word)) + line.substr(colon);
  }
  return paint_cells(paint_cells(line, "fits", Tone::Good, style), "OOM", Tone::Bad, style);
}

}  // namespace

bool set_color_mode(const std::string& when) {
  if (when == "auto") g_mode = ColorMode::Auto;
  else if (when == "always") g_mode = ColorMode::Always;
  else if (when == "never") g_mode = ColorMode::Never;
  else return false;
  return true;
}

Style style_for(std::FILE* stream) {
  if (g_mode != ColorMode::Auto) return Style{g_mode == ColorMode::Always};
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if ((no_color && *no_color) || (term && std::strcmp(term, "dumb") == 0)) return Style{false};
  return Style{isatty(fileno(stream)) == 1};
}

std::string highlight(const std::string& text, const Style& style) {
  if (!style.color) return text;
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    const auto end = nl == std::string::npos ? text.size() : nl;
    out += highlight_line(text.substr(start, end - start), style);
    if (nl != std::string::npos) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace vramdoc::cli
