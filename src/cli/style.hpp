// When to colour (--color, NO_COLOR, a terminal). What to colour is the renderers' (they take a
// Style, core/style.hpp); pipes and files get plain text, so golden files and scripts never see a code.
#pragma once
#include <cstdio>
#include <string>

#include "core/style.hpp"

namespace vramdoc::cli {

enum class ColorMode { Auto, Always, Never };

// Sets the mode from --color's value: "auto", "always" or "never"; false for anything else.
bool set_color_mode(const std::string& when);
// The style for text going to `stream`: Always / Never as set; Auto colours a terminal unless
// NO_COLOR is set (and not empty) or TERM is "dumb".
Style style_for(std::FILE* stream);

}  // namespace vramdoc::cli
