// Mutations for the parsers' fuzz tests: 1-4 random edits of a valid text (a character replaced
// by one of `alphabet`, a run erased, a piece of the text inserted elsewhere, the rest cut off).
#pragma once
#include <random>
#include <string>

namespace vramdoc::fuzz {

inline std::string mutate_text(std::string text, std::mt19937& rng, const std::string& alphabet) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const std::size_t at = rng() % text.size();
    switch (rng() % 4) {
      case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
      case 1: text.erase(at, 1 + rng() % 8); break;
      case 2: text.insert(at, text.substr(rng() % text.size(), rng() % 16)); break;
      default: text.resize(at); break;
    }
  }
  return text;
}

}  // namespace vramdoc::fuzz
