#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_bench(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("bench", "vramdoc bench (issue 8)");
}

}  // namespace vramdoc::cli
