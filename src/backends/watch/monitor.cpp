#include "backends/watch/monitor.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <thread>

#include "backends/watch/exporter.hpp"
#include "backends/watch/http_server.hpp"
#include "backends/watch/sampler.hpp"
#include "backends/watch/signals.hpp"
#include "backends/watch/terminal.hpp"
#include "core/watch/prometheus.hpp"
#include "core/watch/render.hpp"
#include "core/watch/screen.hpp"

namespace vramdoc::backends {

namespace {

using Clock = std::chrono::steady_clock;

std::string clock_text() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &local);
  return buf;
}

WatchEnd run_once(WatchSampler& sampler, const WatchOptions& o, const WatchOutput& out) {
  auto snapshot = sampler.sample();
  out.print(o.json ? watch::render_json(snapshot) : watch::render_text(snapshot, o.style));
  return {};
}

// Says when the driver stops or starts answering (the exporter keeps serving).
void report_driver(const watch::Snapshot& snapshot, std::optional<std::string>& said, const WatchOutput& out) {
  if (snapshot.driver_error == said) return;
  if (snapshot.driver_error)
    out.note("warning: cannot read the GPUs: " + *snapshot.driver_error + "; serving vramdoc_up 0 and trying again");
  else if (said)
    out.note("the GPU driver answers now (" + std::to_string(snapshot.gpus.size()) + " GPU(s))");
  said = snapshot.driver_error;
}

// Samples every interval until --duration, Ctrl-C or SIGTERM; logs and/or serves each sample.
WatchEnd run_headless(const std::function<watch::Snapshot()>& sample, const WatchOptions& o, const WatchOutput& out) {
  std::FILE* log = nullptr;
  if (!o.log_path.empty()) {
    std::error_code ec;  // a new or empty log gets the CSV header (no open: the log may be a FIFO)
    const bool fresh = !std::filesystem::is_regular_file(o.log_path, ec) || std::filesystem::file_size(o.log_path, ec) == 0;
    log = std::fopen(o.log_path.c_str(), "a");
    if (!log) return {"cannot write the log " + o.log_path + ": " + std::strerror(errno), false};
    if (fresh && o.log_format == WatchOptions::LogFormat::Csv) std::fputs(watch::csv_header().c_str(), log);
  }
  std::optional<std::string> driver_said;
  // The first sample is taken before serving, so that /metrics never answers empty.
  auto latest = std::make_shared<const watch::Snapshot>(sample());
  report_driver(*latest, driver_said, out);
  ExporterFeed feed(o.export_options.max_processes);
  feed.publish(latest);
  std::unique_ptr<backends::HttpServer> server;
  if (!o.serve.empty()) {
    bool bad_input = true;
    auto started = start_exporter(o, feed, out.note, bad_input);
    if (!started) {
      if (log) std::fclose(log);
      return {started.error(), bad_input};
    }
    server = std::move(*started);
  }
  auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.interval_s));
  auto start = Clock::now();
  auto next = start;
  bool first = true;
  while (!g_watch_stop) {
    if (o.duration_s && Clock::now() - start >= std::chrono::duration<double>(*o.duration_s)) break;
    std::shared_ptr<const watch::Snapshot> snapshot = latest;
    if (!first) {
      snapshot = std::make_shared<const watch::Snapshot>(sample());
      report_driver(*snapshot, driver_said, out);
      if (server) feed.publish(snapshot);
    }
    first = false;
    if (log) {
      std::string lines = o.log_format == WatchOptions::LogFormat::Csv ? watch::render_csv_rows(*snapshot)
                                                                       : watch::render_jsonl_line(*snapshot);
      if (std::fputs(lines.c_str(), log) < 0 || std::fflush(log) != 0) {
        const std::string why = std::strerror(errno);
        std::fclose(log);
        return {"cannot write the log " + o.log_path + ": " + why, false};
      }
    }
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // a slow sample: skip, do not burst
    // Sleep in short steps: a signal does not interrupt sleep_until on every libc.
    while (!g_watch_stop && Clock::now() < next)
      std::this_thread::sleep_until(std::min(next, Clock::now() + std::chrono::milliseconds(200)));
  }
  if (log) std::fclose(log);
  return {};
}

WatchEnd run_view(WatchSampler& sampler, const WatchOptions& o, const WatchOutput& out) {
  Terminal terminal;
  if (!terminal.ok()) {  // stdin is not a terminal: no keys to read
    out.print(watch::render_text(sampler.sample(), o.style));
    return {};
  }
  watch::MemoryHistory history;
  watch::ScreenState state;
  watch::Snapshot snapshot;
  auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.interval_s));
  auto start = Clock::now();
  auto next = start;
  bool dirty = true;
  while (!g_watch_stop && !state.quit) {
    auto now = Clock::now();
    if (o.duration_s && now - start >= std::chrono::duration<double>(*o.duration_s)) break;
    if (now >= next) {
      snapshot = sampler.sample();
      history.push(snapshot);
      next = std::max(next + interval, now);
      dirty = true;
    }
    if (dirty || g_watch_resized.exchange(false)) {
      auto [rows, cols] = Terminal::size();
      Terminal::draw(watch::render_screen(snapshot, history, state, rows, cols, clock_text(), o.style), o.style.color);
      dirty = false;
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    for (const auto& key : watch::parse_keys(Terminal::read_keys(static_cast<int>(std::max<long long>(wait, 0))))) {
      state = watch::apply(state, key, snapshot);
      if (state.request) {  // confirmed with y: sent here, the outcome on the bottom line
        const auto& r = *state.request;
        state.status = watch::signal_outcome(r, backends::send_signal(r.process.pid, r.start_ticks, r.signal));
        state.request.reset();
      }
      dirty = true;
    }
  }
  return {};
}

}  // namespace

WatchEnd run_watch(const WatchOptions& o, const WatchOutput& out) {
  install_watch_signal_handlers();
  if (!o.serve.empty()) {  // the exporter serves vramdoc_up 0 until the driver answers
    DriverRetryingSampler sampler(o.device);
    return run_headless([&] { return sampler.sample(); }, o, out);
  }
  auto nvml = Nvml::open();
  if (!nvml) return {"cannot read the GPUs: " + nvml.error() + "\n  (is the NVIDIA driver installed? `nvidia-smi` should list the GPUs)"};
  auto devices = watched_devices(**nvml, o.device);
  if (!devices) return {devices.error()};
  WatchSampler sampler(*nvml, *devices);
  if (o.once) return run_once(sampler, o, out);
  if (!o.log_path.empty()) return run_headless([&] { return sampler.sample(); }, o, out);
  return run_view(sampler, o, out);
}

}  // namespace vramdoc::backends
