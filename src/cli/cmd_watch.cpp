// `vramdoc watch`: the live monitor. --once [--json], --log FILE.csv|.jsonl, --serve ADDR, and
// the full-screen view (the default on a terminal). The modes are backends/watch/monitor.hpp's.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include "backends/host.hpp"
#include "backends/watch/monitor.hpp"
#include "cli/command.hpp"
#include "cli/features.hpp"
#include "cli/style.hpp"
#include "core/units.hpp"
#include "core/watch/dcgm.hpp"

namespace vramdoc::cli {

namespace {

// Where --serve alone listens: loopback, one port above dcgm-exporter's 9400 so both can run.
constexpr const char* kDefaultServe = "127.0.0.1:9401";

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The longest --interval: a day. A monitor that samples less often than that is a typo.
constexpr double kMaxIntervalSeconds = 24 * 3600;

// Checks the combination of options and fills the parsed durations; an error is a usage error.
std::optional<std::string> validate(backends::WatchOptions& o, const std::string& interval, const std::string& duration) {
  auto seconds = parse_duration(interval);
  if (!seconds) return "--interval: " + seconds.error();
  if (*seconds < 0.01) return "--interval " + interval + " is too short: 10ms is the minimum";
  if (*seconds > kMaxIntervalSeconds) return "--interval " + interval + " is too long: 24h is the maximum";
  o.interval_s = *seconds;
  if (!duration.empty()) {
    auto d = parse_duration(duration);
    if (!d) return "--duration: " + d.error();
    if (*d <= 0) return "--duration must be positive";
    o.duration_s = *d;
  }
  if (o.once && (!o.log_path.empty() || !o.serve.empty()))
    return "--once takes one sample: it does not go with --log or --serve";
  if (o.json && !o.once) return "--json goes with --once (use --log FILE.jsonl to record JSON lines)";
  if (o.serve.empty() && (o.export_options.command || !o.web_config.empty()))
    return "--export-command and --web-config go with --serve";
  if (!o.log_path.empty()) {
    if (ends_with(o.log_path, ".csv")) o.log_format = backends::WatchOptions::LogFormat::Csv;
    else if (ends_with(o.log_path, ".jsonl")) o.log_format = backends::WatchOptions::LogFormat::Jsonl;
    else return "--log " + o.log_path + ": the file name must end in .csv or .jsonl";
  }
  return std::nullopt;
}

}  // namespace

int cmd_watch(const std::vector<std::string>& args) {
  CLI::App app{"Live GPU and per-process memory monitor. On a terminal: a full-screen view (q quit, s sort, "
               "g / left / right / 0-9 pick a GPU, up / down / j / k pick a process, T / K / I send it SIGTERM / "
               "SIGKILL / SIGINT after a y). Otherwise, or with --once: one table.",
               "watch"};
  backends::WatchOptions o;
  std::string interval = "1s";
  std::string duration;
  std::optional<unsigned> device;
  app.add_flag("--once", o.once, "print one sample and exit");
  app.add_flag("--json", o.json, "with --once: JSON instead of a table");
  app.add_option("--log", o.log_path, "record every GPU and process to FILE.csv or FILE.jsonl (headless)");
  app.add_option("--interval", interval, "time between samples, 10ms to 24h, e.g. 100ms, 1s (default 1s)");
  app.add_option("--duration", duration, "stop after this long, at most 100 days, e.g. 10m (default: until Ctrl-C)");
  app.add_option("--serve", o.serve,
                 "serve Prometheus metrics on ADDRESS (default 127.0.0.1:9401, beside dcgm-exporter's 9400; a "
                 "non-loopback address such as 0.0.0.0:9401 must be given explicitly and is warned about)")
      ->expected(0, 1)
      ->default_str(kDefaultServe);
  std::string metrics = "vramdoc,dcgm";
  app.add_option("--metrics", metrics,
                 "with --serve: the metric sets to export, vramdoc (per GPU and per process), dcgm (dcgm-exporter's "
                 "DCGM_FI_DEV_* names, for its dashboards) or both (default vramdoc,dcgm; beside a running "
                 "dcgm-exporter: vramdoc)");
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
  app.add_option("--device", device, "watch only GPU N (NVML index)");
  if (int code = parse_args(app, args); code >= 0) return code;
  if (app.count("--serve") && o.serve.empty()) o.serve = kDefaultServe;
  if (app.count("--metrics") && o.serve.empty()) return fail("watch", "--metrics goes with --serve");
  auto sets = watch::parse_metric_sets(metrics);
  if (!sets) return fail("watch", sets.error());
  o.export_options.metrics = *sets;
  if (sets->dcgm) o.export_options.hostname = backends::node_name();
  if (auto problem = validate(o, interval, duration)) return fail("watch", *problem);
  o.device = device;
  if (!o.once && o.log_path.empty() && o.serve.empty() && !isatty(STDOUT_FILENO)) o.once = true;
  o.style = style_for(stdout);
  o.tls = tls_stream_factory;
  const auto end = backends::run_watch(o, {[](const std::string& text) { print(text); },
                                            [](const std::string& line) { fail("watch", line, 0); }});
  if (end.error) return fail("watch", *end.error, end.bad_input ? kUsage : kFailure);
  return kOk;
}

}  // namespace vramdoc::cli
