#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/command.hpp"
#include "vramdoc/config.h"

namespace vramdoc::cli {

namespace {

std::string usage() {
  std::string out =
      "vramdoc " VRAMDOC_VERSION " - will it fit, is it a leak, what is my GPU's memory really like\n\n"
      "Usage: vramdoc COMMAND [OPTIONS]\n       vramdoc COMMAND --help\n\nCommands:\n";
  for (const auto& c : commands()) {
    std::string name(c.name);
    out += "  " + name + std::string(10 - std::min<std::size_t>(name.size(), 9), ' ') + std::string(c.summary) + "\n";
  }
  out += "\nOptions:\n  --help      this list\n  --version   the version and the features built in\n";
  return out;
}

}  // namespace

int parse_args(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    print(app.help());
    return kOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "vramdoc %s: %s\nRun 'vramdoc %s --help' for the options.\n", app.get_name().c_str(),
                 e.what(), app.get_name().c_str());
    return kUsage;
  }
  return -1;
}

int fail(std::string_view command, std::string_view message, int code) {
  std::fprintf(stderr, "vramdoc %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return code;
}

void print(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print(usage());
    return args.empty() ? kUsage : kOk;
  }
  if (args[0] == "--version") {
    print("vramdoc " VRAMDOC_VERSION " (CUDA kernels: " + std::string(VRAMDOC_HAVE_CUDA ? "yes" : "no") +
          ", CUPTI tracer: " + std::string(VRAMDOC_HAVE_CUPTI ? "yes" : "no") + ")\n");
    return kOk;
  }
  for (const auto& c : commands()) {
    if (c.name == args[0]) {
      std::vector<std::string> rest(args.begin() + 1, args.end());
      try {
        return c.run(rest);
      } catch (const std::exception& e) {  // a bug, not a user error: say so rather than abort
        return fail(c.name, std::string("internal error: ") + e.what(), kFailure);
      }
    }
  }
  std::fprintf(stderr, "vramdoc: unknown command '%s'\n\n%s", args[0].c_str(), usage().c_str());
  return kUsage;
}

}  // namespace vramdoc::cli
