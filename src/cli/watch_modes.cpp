#include "cli/watch_modes.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <thread>

#include "backends/http_server.hpp"
#include "backends/signals.hpp"
#include "cli/command.hpp"
#include "cli/style.hpp"
#include "cli/watch_exporter.hpp"
#include "cli/watch_sampler.hpp"
#include "cli/watch_terminal.hpp"
#include "core/watch/prometheus.hpp"
#include "core/watch/render.hpp"
#include "core/watch/screen.hpp"

namespace vramdoc::cli {

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

int run_once(WatchSampler& sampler, bool json) {
  auto snapshot = sampler.sample();
  if (json) print(json_document("vramdoc.watch/1", to_json(snapshot).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"));
  else print(render_text(snapshot, style_for(stdout)));
  return kOk;
}

// Says on stderr when the driver stops or starts answering (the exporter keeps serving).
void report_driver(const watch::Snapshot& snapshot, std::optional<std::string>& said) {
  if (snapshot.driver_error == said) return;
  if (snapshot.driver_error)
    std::fprintf(stderr, "vramdoc watch: warning: cannot read the GPUs: %s; serving vramdoc_up 0 and trying again\n",
                 snapshot.driver_error->c_str());
  else if (said)
    std::fprintf(stderr, "vramdoc watch: the GPU driver answers now (%zu GPU(s))\n", snapshot.gpus.size());
  said = snapshot.driver_error;
}

// Samples every interval until --duration, Ctrl-C or SIGTERM; logs and/or serves each sample.
int run_headless(const std::function<watch::Snapshot()>& sample, const WatchOptions& o) {
  std::FILE* log = nullptr;
  if (!o.log_path.empty()) {
    std::error_code ec;  // a new or empty log gets the CSV header (no open: the log may be a FIFO)
    const bool fresh = !std::filesystem::is_regular_file(o.log_path, ec) || std::filesystem::file_size(o.log_path, ec) == 0;
    log = std::fopen(o.log_path.c_str(), "a");
    if (!log) return fail("watch", "cannot write the log " + o.log_path + ": " + std::strerror(errno), kFailure);
    if (fresh && o.log_format == WatchOptions::LogFormat::Csv) std::fputs(watch::csv_header().c_str(), log);
  }
  std::optional<std::string> driver_said;
  // The first sample is taken before serving, so that /metrics never answers empty.
  auto latest = std::make_shared<const watch::Snapshot>(sample());
  report_driver(*latest, driver_said);
  ExporterFeed feed(o.export_options.max_processes);
  feed.publish(latest);
  std::unique_ptr<backends::HttpServer> server;
  if (!o.serve.empty()) {
    int code = kUsage;
    auto started = start_exporter(o, feed, code);
    if (!started) {
      if (log) std::fclose(log);
      return fail("watch", started.error(), code);
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
      report_driver(*snapshot, driver_said);
      if (server) feed.publish(snapshot);
    }
    first = false;
    if (log) {
      std::string lines = o.log_format == WatchOptions::LogFormat::Csv ? watch::render_csv_rows(*snapshot)
                                                                       : json_document("vramdoc.watch/1", watch::render_jsonl_line(*snapshot));
      if (std::fputs(lines.c_str(), log) < 0 || std::fflush(log) != 0) {
        std::fclose(log);
        return fail("watch", "cannot write the log " + o.log_path + ": " + std::strerror(errno), kFailure);
      }
    }
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // a slow sample: skip, do not burst
    // Sleep in short steps: a signal does not interrupt sleep_until on every libc.
    while (!g_watch_stop && Clock::now() < next)
      std::this_thread::sleep_until(std::min(next, Clock::now() + std::chrono::milliseconds(200)));
  }
  if (log) std::fclose(log);
  return kOk;
}

int run_view(WatchSampler& sampler, const WatchOptions& o) {
  Terminal terminal;
  if (!terminal.ok()) return run_once(sampler, false);  // stdin is not a terminal: no keys to read
  const char* no_color = std::getenv("NO_COLOR");  // https://no-color.org: set and not empty means none
  const Style style{no_color == nullptr || *no_color == '\0'};
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
      Terminal::draw(watch::render_screen(snapshot, history, state, rows, cols, clock_text(), style));
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
  return kOk;
}

}  // namespace

int run_watch(const WatchOptions& o) {
  install_watch_signal_handlers();
  if (!o.serve.empty()) {  // the exporter serves vramdoc_up 0 until the driver answers
    DriverRetryingSampler sampler(o.device);
    return run_headless([&] { return sampler.sample(); }, o);
  }
  auto nvml = backends::Nvml::open();
  if (!nvml) {
    return fail("watch", "cannot read the GPUs: " + nvml.error() +
                             "\n  (is the NVIDIA driver installed? `nvidia-smi` should list the GPUs)");
  }
  auto devices = watched_devices(**nvml, o.device);
  if (!devices) return fail("watch", devices.error());
  WatchSampler sampler(*nvml, *devices);
  if (o.once) return run_once(sampler, o.json);
  if (!o.log_path.empty()) return run_headless([&] { return sampler.sample(); }, o);
  return run_view(sampler, o);
}

}  // namespace vramdoc::cli
