#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_info(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("info", "vramdoc info (issue 2)");
}

}  // namespace vramdoc::cli
