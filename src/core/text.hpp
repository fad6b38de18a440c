// Small text helpers shared by the renderers (tables, SVG, HTML).
#pragma once
#include <string>

namespace vramdoc {

// `value` with exactly `decimals` digits after the point: fixed(3.14159, 2) == "3.14".
std::string fixed(double value, int decimals);
// Text safe inside XML / HTML elements and double-quoted attributes (& < > " escaped).
std::string xml_escape(const std::string& text);

}  // namespace vramdoc
