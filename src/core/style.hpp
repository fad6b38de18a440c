// Colour for text meant for a terminal. The CLI decides whether to colour (a terminal, NO_COLOR,
// --color); renderers take a Style and are colourless by default, so golden files never hold a code.
#pragma once
#include <string>

namespace vramdoc {

enum class Tone { Good, Warn, Bad };

struct Style {
  bool color = false;
  // `text` in the tone's colour (green, yellow, red) when colouring, else `text` unchanged.
  std::string paint(const std::string& text, Tone tone) const;
};

}  // namespace vramdoc
