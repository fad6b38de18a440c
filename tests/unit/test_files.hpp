// Reading the test data the unit tests compare with (tests/data, golden files): the whole file as
// bytes; empty when it cannot be read (the test's own checks then fail on what is missing).
#pragma once
#include <fstream>
#include <sstream>
#include <string>

namespace vramdoc::test {

// The file's whole content, or "" when it cannot be opened.
inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace vramdoc::test
