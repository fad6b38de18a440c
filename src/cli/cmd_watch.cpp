#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_watch(const std::vector<std::string>& args) {
  (void)args;
  return not_built_yet("watch", "vramdoc watch (issue 5)");
}

}  // namespace vramdoc::cli
