#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_probe(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("probe", "vramdoc probe (issue 7)");
}

}  // namespace vramdoc::cli
