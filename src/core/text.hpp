// Small text helpers shared by the renderers (tables, SVG, HTML).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace vramdoc {

// `value` with exactly `decimals` digits after the point: fixed(3.14159, 2) == "3.14".
std::string fixed(double value, int decimals);
// Text safe inside XML / HTML elements and double-quoted attributes (& < > " escaped).
std::string xml_escape(const std::string& text);

// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate `word` was most likely a misspelling of: the closest within a third of its
// length (at least 1, at most 3 edits), or one it is the start of; "" when none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace vramdoc
