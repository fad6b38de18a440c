#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_analyze(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("analyze", "vramdoc analyze (issue 4)");
}

}  // namespace vramdoc::cli
