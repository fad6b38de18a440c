// The command table and the helpers every command shares. Only the CLI prints and exits.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace CLI {
class App;
}

namespace vramdoc::cli {

// Exit codes, the same for every command (docs/cli.md; `vramdoc --help` shows the table).
// `run` is the exception: it passes the job's own status through (see docs/cli.md).
enum Exit : int {
  kOk = 0,       // success: the command did what was asked and the answer is "yes" / nothing wrong
  kFailure = 1,  // the answer is "no": does not fit, a leak (or another problem) found, probe found nothing
  kUsage = 2,    // an error: bad usage or input, a missing driver or feature, a failed write; no answer
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

// Parses `args` into `app` (adding the shared --color option and vramdoc's help format).
// Returns -1 when the command should go on, otherwise the exit code (0 after --help, kUsage
// after a parse error, with the message already printed: a misspelt option gets "did you mean").
int parse_args(CLI::App& app, const std::vector<std::string>& args);

// Prints "vramdoc CMD: MESSAGE" to stderr and returns `code`.
int fail(std::string_view command, std::string_view message, int code = kUsage);

// Writes text to stdout exactly as given (renderers return strings; only the CLI writes). A
// failed write is remembered: run_cli checks standard output at exit and reports it (kUsage).
void print(std::string_view text);

// Writes a whole output file the user asked for (--html, --svg, bench --report); the error names it.
Result<bool> write_text_file(const std::string& path, const std::string& text);

}  // namespace vramdoc::cli
