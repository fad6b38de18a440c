#include "cli/style.hpp"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace vramdoc::cli {

namespace {

ColorMode g_mode = ColorMode::Auto;

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

}  // namespace vramdoc::cli
