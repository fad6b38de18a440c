// The entry point: the command table's dispatch, the top-level help, the help format every
// command shares, parse errors ("did you mean"), and the final check of standard output.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "cli/command.hpp"
#include "cli/style.hpp"
#include "core/terminal_safe.hpp"
#include "core/text.hpp"
#include "vramdoc/config.h"

namespace vramdoc::cli {

namespace {

int g_stdout_errno = 0;  // the first failed write to stdout

constexpr const char* kExitCodes =
    "Exit status (every command):\n"
    "  0  success: the answer is yes, or nothing is wrong\n"
    "  1  the answer is no: does not fit (estimate), a leak or another problem found (analyze),\n"
    "     probe found no value that fits\n"
    "  2  error: bad usage or input, a missing driver or feature, a failed write\n"
    "  run passes its job's exit status through (2 if the job succeeded but the timeline was lost)\n";

std::string usage() {
  std::string out =
      "vramdoc " VRAMDOC_VERSION " - will it fit, is it a leak, what is my GPU's memory really like\n\n"
      "Usage: vramdoc COMMAND [OPTIONS]\n       vramdoc help COMMAND\n\nCommands:\n";
  for (const auto& c : commands()) {
    std::string name(c.name);
    out += "  " + name + std::string(10 - std::min<std::size_t>(name.size(), 9), ' ') + std::string(c.summary) + "\n";
  }
  out += "\nOptions:\n  -h, --help      this list (vramdoc COMMAND --help: the command's options)\n"
         "  -V, --version   the version and the features built in\n\n";
  return out + kExitCodes + "\nColour: on a terminal; off for pipes, with NO_COLOR set, or --color never.\n";
}

// The placeholder shown after an option in help: what kind of value it takes.
std::string value_label(const CLI::Option& opt) {
  static constexpr std::pair<std::string_view, std::string_view> kLabels[] = {
      {"config", "FILE"},      {"html", "FILE"},       {"out", "FILE"},         {"log", "FILE"},
      {"svg", "FILE"},         {"web-config", "FILE"}, {"keep", "DIR"},        {"report", "DIR"},       {"trace-dir", "DIR"},
      {"interval", "DURATION"}, {"duration", "DURATION"}, {"budget", "DURATION"}, {"trial-time", "DURATION"},
      {"gpu-memory", "SIZE"},  {"model", "NAME"},      {"gpu", "NAME"},         {"serve", "ADDRESS"},
      {"color", "WHEN"},       {"metrics", "LIST"},    {"cmd", "COMMAND"},     {"step-regex", "REGEX"}, {"only", "LIST"},
      {"lora-targets", "LIST"}, {"margin", "PERCENT"}, {"memory-share", "FRACTION"}, {"batch", "N"},
      {"seq", "N"},             {"lora-rank", "N"},     {"gpus", "N"},           {"tp", "N"},
      {"mode", "NAME"},         {"precision", "NAME"},  {"optimizer", "NAME"},   {"attention", "NAME"},
      {"logits", "NAME"},       {"kv-dtype", "NAME"},   {"quant", "NAME"},       {"offload", "NAME"},
      {"new-tokens", "N"},      {"fsdp-version", "N"},  {"shard-group", "N"},    {"zero-reduce-bucket", "NUMBER"},
      {"zero-max-live", "NUMBER"}, {"zero-persistence", "NUMBER"}, {"nccl-buffsize", "SIZE"}, {"rank", "N"}};
  for (const auto& name : opt.get_lnames()) {
    for (const auto& [key, label] : kLabels)
      if (name == key) return std::string(label);
  }
  std::string type = opt.get_type_name();
  type = type.substr(0, type.find(':'));  // "INT:INT in [0 - 3]": the validator is parser detail
  if (type == "INT" || type == "UINT") return "N";
  if (type == "FLOAT") return "NUMBER";
  return type;
}

// vramdoc's help: "Usage: vramdoc COMMAND ...", values labelled by kind, no parser internals.
class Help final : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string) const override {
    std::string out = "Usage: vramdoc " + app->get_name();
    if (!app->get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty()) out += " [OPTIONS]";
    for (const auto* p : app->get_options([](const CLI::Option* o) { return o->get_positional(); })) out += " " + p->get_name();
    if (app->get_name() == "run") out += " -- COMMAND [ARGS...]";
    return out + "\n";
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";  // a flag
    if (opt->get_positional()) return opt->get_required() ? " (required)" : "";
    std::string out = " " + value_label(*opt);
    if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
    if (opt->get_required()) out += " (required)";
    return out;
  }
};

// "unknown option '--bach'; did you mean '--batch'?" for the first argument CLI11 left over.
std::string extras_message(CLI::App& app) {
  const auto left = app.remaining();
  if (left.empty()) return "unexpected arguments";
  const std::string arg = left.front();
  if (!arg.starts_with("-")) return "unexpected argument '" + arg + "'";
  const std::string name = arg.substr(0, arg.find('='));
  std::vector<std::string> known;
  for (const auto* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) known.push_back("--" + l);
    for (const auto& s : o->get_snames()) known.push_back("-" + s);
  }
  const std::string guess = closest_match(name, known);
  return "unknown option '" + name + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?");
}

// CLI11's conversion errors with the option first: "--device: 'x' is not a valid value".
std::string parse_error_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  const std::string prefix = "Could not convert: ";
  const auto equals = what.find(" = ");
  if (what.starts_with(prefix) && equals != std::string::npos) {
    return what.substr(prefix.size(), equals - prefix.size()) + ": '" + what.substr(equals + 3) + "' is not a valid value";
  }
  return what;
}

// Checks standard output once the command is done: a result that could not be written is an error.
int check_stdout(std::string_view command, int code) {
  errno = 0;
  if (std::fflush(stdout) != 0 && !g_stdout_errno) g_stdout_errno = errno ? errno : EIO;
  if (!g_stdout_errno && !std::ferror(stdout)) return code;
  const std::string who = command.empty() ? "vramdoc" : "vramdoc " + std::string(command);
  std::fprintf(stderr, "%s: cannot write the output to standard output: %s\n", who.c_str(),
               std::strerror(g_stdout_errno ? g_stdout_errno : EIO));
  return kUsage;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

int unknown_command(const std::string& name) {
  std::vector<std::string> names = {"help"};
  for (const auto& c : commands()) names.emplace_back(c.name);
  const std::string guess = closest_match(name, names);
  std::fprintf(stderr, "vramdoc: unknown command '%s'%s\nRun 'vramdoc --help' for the commands.\n", name.c_str(),
               guess.empty() ? "" : ("; did you mean '" + guess + "'?").c_str());
  return kUsage;
}

int run_command(const Command& c, const std::vector<std::string>& args) {
  try {
    return check_stdout(c.name, c.run(args));
  } catch (const std::exception& e) {  // a bug, not a user error: say so rather than abort
    return fail(c.name, std::string("internal error (a bug in vramdoc; please report it): ") + e.what(), kUsage);
  }
}

}  // namespace

int parse_args(CLI::App& app, const std::vector<std::string>& args) {
  app.formatter(std::make_shared<Help>());
  std::string color = "auto";
  app.add_option("--color", color, "colour: auto (a terminal, unless NO_COLOR is set) | always | never");
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  const std::string name = app.get_name();
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    print(app.help());
    return kOk;
  } catch (const CLI::ExtrasError&) {
    // The message quotes the argument as given (`--bad$'\e]52;...'`, a file name with a newline).
    std::fprintf(stderr, "vramdoc %s: %s\nRun 'vramdoc %s --help' for the options.\n", name.c_str(),
                 terminal_safe(extras_message(app)).c_str(), name.c_str());
    return kUsage;
  } catch (const CLI::ParseError& e) {
    // A misspelt option is said first, even when it also left a required argument missing.
    const auto left = app.remaining();
    const bool misspelt = dynamic_cast<const CLI::RequiredError*>(&e) && !left.empty() && left.front().starts_with("-");
    const std::string message = terminal_safe(misspelt ? extras_message(app) : parse_error_message(e));
    std::fprintf(stderr, "vramdoc %s: %s\nRun 'vramdoc %s --help' for the options.\n", name.c_str(), message.c_str(), name.c_str());
    return kUsage;
  }
  if (!set_color_mode(color)) return fail(name, "--color must be auto, always or never, got '" + color + "'");
  return -1;
}

int fail(std::string_view command, std::string_view message, int code) {
  // A message may quote a file's field, a file name or a process's name: nothing in it acts on
  // the terminal, and a line after a newline (one of ours, or one in a file name) is indented, so
  // it cannot pass for a message of vramdoc's own.
  std::string safe;
  for (const char c : terminal_safe_lines(message)) {
    if (!safe.empty() && safe.back() == '\n' && c != ' ') safe += "  ";
    safe += c;
  }
  std::fprintf(stderr, "vramdoc %.*s: %s\n", static_cast<int>(command.size()), command.data(), safe.c_str());
  return code;
}

void print(std::string_view text) {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  if (!ok && !g_stdout_errno) g_stdout_errno = errno ? errno : EIO;
}

Result<bool> write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error("cannot write " + path + ": " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return make_error("cannot write " + path + ": " + std::strerror(errno));
  return true;
}

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print(usage());
    return check_stdout("", kUsage);
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    if (args[0] == "help" && args.size() > 1 && args[1] != "help") {
      const Command* c = find_command(args[1]);
      return c ? run_command(*c, {"--help"}) : unknown_command(args[1]);
    }
    print(usage());
    return check_stdout("", kOk);
  }
  if (args[0] == "--version" || args[0] == "-V") {
    print("vramdoc " VRAMDOC_VERSION " (CUDA kernels: " + std::string(VRAMDOC_HAVE_CUDA ? "yes" : "no") +
          ", CUPTI tracer: " + std::string(VRAMDOC_HAVE_CUPTI ? "yes" : "no") + ")\n");
    return check_stdout("", kOk);
  }
  if (const Command* c = find_command(args[0])) return run_command(*c, {args.begin() + 1, args.end()});
  return unknown_command(args[0]);
}

}  // namespace vramdoc::cli
