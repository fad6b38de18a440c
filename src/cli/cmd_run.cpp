#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_run(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("run", "vramdoc run (issue 4)");
}

}  // namespace vramdoc::cli
