// The modes of `vramdoc watch` (one sample, the headless log and exporter loop, the full-screen
// view), behind one options struct that cmd_watch.cpp fills. They write where WatchOutput says:
// the CLI's standard output, its warnings, and the terminal of the full-screen view.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "backends/watch/socket_stream.hpp"
#include "core/result.hpp"
#include "core/style.hpp"
#include "core/watch/prometheus.hpp"
#include "core/watch/web_config.hpp"

namespace vramdoc::backends {

// TLS streams for the exporter (cli/features.hpp: the one place that knows whether TLS was built).
using TlsFactory = std::function<Result<std::unique_ptr<SocketStreamFactory>>(const watch::TlsServerConfig&)>;

struct WatchOptions {
  bool once = false;
  bool json = false;
  std::string log_path;
  enum class LogFormat { Csv, Jsonl } log_format = LogFormat::Csv;
  std::string serve;  // listen address; empty: no exporter
  watch::ExportOptions export_options;  // --export-command, --export-max-processes
  std::string web_config;  // --web-config FILE: TLS and basic auth for the exporter
  double interval_s = 1.0;
  std::optional<double> duration_s;  // empty: until Ctrl-C / q
  std::optional<unsigned> device;    // empty: every GPU
  Style style;                       // --color, for the table and the full-screen view
  TlsFactory tls;
};

struct WatchOutput {
  std::function<void(const std::string&)> print;  // standard output: --once's table or JSON
  std::function<void(const std::string&)> note;   // a warning or a status line for the user (stderr)
};

// How a watch ended: fine, or an error, and whether the input was at fault (a bad address, web
// config or device: exit 2) or the system (a log that cannot be written, an address in use: exit 1).
struct WatchEnd {
  std::optional<std::string> error;
  bool bad_input = true;
};

// Opens NVML, picks the devices and runs the mode the options ask for.
WatchEnd run_watch(const WatchOptions& options, const WatchOutput& output);

}  // namespace vramdoc::backends
