// The modes of `vramdoc watch`, behind one options struct that cmd_watch.cpp fills.
#pragma once
#include <optional>
#include <string>

#include "core/watch/prometheus.hpp"

namespace vramdoc::cli {

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
};

// Opens NVML, picks the devices and runs the mode the options ask for; returns the exit code.
int run_watch(const WatchOptions& options);

}  // namespace vramdoc::cli
