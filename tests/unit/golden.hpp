// Whole-output checks of a renderer against tests/golden/COMMAND/CASE (tests/golden/README.md):
// the same files and the same regenerate command (scripts/update_golden.sh) as the binary's cases.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "test_files.hpp"

namespace vramdoc::test {

// Compares `text` with tests/golden/`name`; with VRAMDOC_UPDATE_GOLDEN=1 (the regenerate
// command) writes it there instead. A missing golden file fails.
inline void expect_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(VRAMDOC_SOURCE_DIR) + "/tests/golden/" + name;
  if (const char* update = std::getenv("VRAMDOC_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good()) << "no golden file tests/golden/" << name << " (scripts/update_golden.sh writes it)";
  EXPECT_EQ(text, file_text(path)) << "tests/golden/" << name << " differs; if the change is meant: scripts/update_golden.sh";
}

}  // namespace vramdoc::test
