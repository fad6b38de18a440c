// The command table and the helpers every command shares. Only the CLI prints and exits.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace vramdoc::cli {

// Exit codes, the same for every command.
enum Exit : int {
  kOk = 0,
  kFailure = 1,   // the command ran and the answer is "no" / a runtime error (message printed)
  kUsage = 2,     // bad arguments, bad input file, or a feature this build or machine lacks
};

struct Command {
  std::string_view name;
  std::string_view summary;  // one line, shown by `vramdoc --help`
  int (*run)(const std::vector<std::string>& args);  // args after the command name
};

// Every command, in the order `--help` lists them.
std::span<const Command> commands();

// Entry point: dispatches argv to a command; returns the process exit code.
int run_cli(int argc, char** argv);

// Parses `args` into `app`. Returns -1 when the command should go on, otherwise the exit code
// (0 after --help, kUsage after a parse error, with the message already printed).
int parse_args(CLI::App& app, const std::vector<std::string>& args);

// Prints "vramdoc CMD: MESSAGE" to stderr and returns `code`.
int fail(std::string_view command, std::string_view message, int code = kUsage);

// Writes text to stdout exactly as given (renderers return strings; only the CLI writes).
void print(std::string_view text);

}  // namespace vramdoc::cli
