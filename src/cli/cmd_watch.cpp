// `vramdoc watch`: the live monitor. --once [--json], --log FILE.csv|.jsonl, --serve ADDR, and
// the full-screen view (the default on a terminal). Modes are in watch_modes.cpp.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include "cli/command.hpp"
#include "cli/watch_modes.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Checks the combination of options and fills the parsed durations; an error is a usage error.
std::optional<std::string> validate(WatchOptions& o, const std::string& interval, const std::string& duration) {
  auto seconds = parse_duration(interval);
  if (!seconds) return seconds.error();
  if (*seconds < 0.01) return "--interval " + interval + " is too short: 10ms is the minimum";
  o.interval_s = *seconds;
  if (!duration.empty()) {
    auto d = parse_duration(duration);
    if (!d) return d.error();
    if (*d <= 0) return "--duration must be positive";
    o.duration_s = *d;
  }
  if (o.once && (!o.log_path.empty() || !o.serve.empty()))
    return "--once takes one sample: it does not go with --log or --serve";
  if (o.json && !o.once) return "--json goes with --once (use --log FILE.jsonl to record JSON lines)";
  if (o.serve.empty() && (o.export_options.command || !o.web_config.empty()))
    return "--export-command and --web-config go with --serve";
  if (!o.log_path.empty()) {
    if (ends_with(o.log_path, ".csv")) o.log_format = WatchOptions::LogFormat::Csv;
    else if (ends_with(o.log_path, ".jsonl")) o.log_format = WatchOptions::LogFormat::Jsonl;
    else return "--log " + o.log_path + ": the file name must end in .csv or .jsonl";
  }
  return std::nullopt;
}

}  // namespace

int cmd_watch(const std::vector<std::string>& args) {
  CLI::App app{"Live GPU and per-process memory monitor. On a terminal: a full-screen view (q quit, s sort, "
               "g / arrows / 0-9 pick a GPU). Otherwise, or with --once: one table.",
               "watch"};
  WatchOptions o;
  std::string interval = "1s";
  std::string duration;
  int device = -1;
  app.add_flag("--once", o.once, "print one sample and exit");
  app.add_flag("--json", o.json, "with --once: JSON instead of a table");
  app.add_option("--log", o.log_path, "record every GPU and process to FILE.csv or FILE.jsonl (headless)");
  app.add_option("--interval", interval, "time between samples, e.g. 100ms, 1s (default 1s)");
  app.add_option("--duration", duration, "stop after this long, e.g. 10m (default: until Ctrl-C)");
  app.add_option("--serve", o.serve,
                 "serve Prometheus metrics on ADDRESS (e.g. 127.0.0.1:9400; a non-loopback address such as "
                 "0.0.0.0:9400 must be given explicitly and is warned about)")
      ->expected(0, 1)
      ->default_str("127.0.0.1:9400");
  app.add_flag("--export-command", o.export_options.command,
               "with --serve: also publish each process's command line (redacted) as a label; by default only "
               "the executable's name");
  app.add_option("--export-max-processes", o.export_options.max_processes,
                 "with --serve: publish at most N processes, the largest users of memory (default 256); the "
                 "others are counted in vramdoc_exporter_processes_dropped_total")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
  app.add_option("--web-config", o.web_config,
                 "with --serve: TLS and basic auth from FILE (the Prometheus exporter-toolkit format, "
                 "docs/security.md)");
  app.add_option("--device", device, "watch only GPU N (NVML index)")->check(CLI::NonNegativeNumber);
  if (int code = parse_args(app, args); code >= 0) return code;
  if (app.count("--serve") && o.serve.empty()) o.serve = "127.0.0.1:9400";
  if (auto problem = validate(o, interval, duration)) return fail("watch", *problem);
  if (device >= 0) o.device = static_cast<unsigned>(device);
  if (!o.once && o.log_path.empty() && o.serve.empty() && !isatty(STDOUT_FILENO)) o.once = true;
  return run_watch(o);
}

}  // namespace vramdoc::cli
