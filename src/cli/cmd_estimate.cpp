#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_estimate(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("estimate", "vramdoc estimate (issue 3)");
}

}  // namespace vramdoc::cli
