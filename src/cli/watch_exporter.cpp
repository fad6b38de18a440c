#include "cli/watch_exporter.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "backends/basic_auth.hpp"
#include "cli/command.hpp"
#include "cli/features.hpp"
#include "core/input_file.hpp"
#include "core/watch/prometheus.hpp"

namespace vramdoc::cli {

namespace {

// The page `/` answers with: where the metrics are.
backends::HttpResponse index_page() {
  return {200, "text/html; charset=utf-8",
          "<!doctype html><title>vramdoc watch</title><h1>vramdoc watch</h1>"
          "<p>GPU and per-process memory metrics: <a href=\"/metrics\">/metrics</a></p>\n"};
}

// Answers / and /metrics from the newest snapshot (with users, the server's gate let it through).
backends::HttpHandler make_handler(ExporterFeed& feed, watch::ExportOptions options) {
  return [&feed, options](const backends::HttpRequest& r) -> backends::HttpResponse {
    if (r.path == "/") return index_page();
    if (r.path != "/metrics") return {404, "text/plain; charset=utf-8", "Not found: try /metrics\n"};
    const auto format = r.accept.find("application/openmetrics-text") != std::string::npos
                            ? watch::ExpositionFormat::OpenMetrics
                            : watch::ExpositionFormat::Prometheus;
    const auto [snapshot, dropped_total] = feed.latest();  // rendered here, outside the feed's lock
    return {200, watch::metrics_content_type(format), watch::render_metrics(*snapshot, format, options, dropped_total)};
  };
}

// A private key others can read is worth a word (the exporter still starts).
void warn_if_key_readable(const std::string& key_file) {
  struct stat st {};
  if (::stat(key_file.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)))
    std::fprintf(stderr, "vramdoc watch: warning: the private key %s is readable by other users (chmod 600 it)\n",
                 key_file.c_str());
}

// What anyone who reaches a non-loopback exporter sees, and how it is protected.
void announce(const WatchOptions& o, const backends::ListenAddress& address, const watch::WebConfig& web,
              std::uint16_t port) {
  const bool tls = web.tls.has_value();
  if (!address.loopback && !tls && web.users.empty()) {
    std::fprintf(stderr,
                 "vramdoc watch: warning: serving on %s, reachable from other machines: anyone who can reach this "
                 "port sees the GPUs' processes, their users and programs%s; --web-config adds TLS and basic auth "
                 "(docs/security.md)\n",
                 o.serve.c_str(), o.export_options.command ? " and (redacted) command lines" : "");
  } else if (!address.loopback && !tls) {
    std::fprintf(stderr, "vramdoc watch: warning: basic auth without TLS: passwords cross the network in clear "
                         "text (add tls_server_config)\n");
  } else if (!address.loopback && web.users.empty() && web.tls->client_auth != watch::ClientAuth::RequireAndVerifyClientCert) {
    std::fprintf(stderr, "vramdoc watch: warning: TLS without authentication: anyone who can reach this port reads "
                         "the metrics (add basic_auth_users, or client_auth_type RequireAndVerifyClientCert)\n");
  }
  const std::string host = address.ipv6 ? "[" + address.host + "]" : address.host;
  std::fprintf(stderr, "vramdoc watch: serving %s://%s:%u/metrics%s (Ctrl-C stops)\n", tls ? "https" : "http",
               host.c_str(), static_cast<unsigned>(port), web.users.empty() ? "" : " with basic auth");
}

}  // namespace

void ExporterFeed::publish(std::shared_ptr<const watch::Snapshot> snapshot) {
  const std::uint64_t total = dropped_.update(*snapshot, max_processes_);
  std::lock_guard lock(mutex_);
  snapshot_ = std::move(snapshot);
  dropped_total_ = total;
}

std::pair<std::shared_ptr<const watch::Snapshot>, std::uint64_t> ExporterFeed::latest() const {
  std::lock_guard lock(mutex_);
  return {snapshot_, dropped_total_};
}

Result<watch::WebConfig> load_web_config(const std::string& path) {
  auto text = read_input_file(path, watch::kMaxWebConfigBytes);  // the one bounded reader (docs/cli.md)
  if (!text) return make_error("--web-config: " + text.error());
  std::error_code ec;
  const std::string base = std::filesystem::absolute(path, ec).parent_path().string();
  auto config = watch::parse_web_config(*text, base);
  if (!config) return make_error("--web-config " + path + ": " + config.error());
  if (auto files = watch::check_web_config_files(*config); !files) return make_error("--web-config " + path + ": " + files.error());
  return config;
}

Result<std::unique_ptr<backends::HttpServer>> start_exporter(const WatchOptions& o, ExporterFeed& feed, int& exit_code) {
  exit_code = kUsage;
  auto address = backends::parse_listen_address(o.serve);
  if (!address) return make_error("--serve: " + address.error());
  watch::WebConfig web;
  if (!o.web_config.empty()) {
    auto loaded = load_web_config(o.web_config);
    if (!loaded) return make_error(loaded.error());
    web = std::move(*loaded);
  }
  std::shared_ptr<backends::SocketStreamFactory> streams;
  if (web.tls) {
    warn_if_key_readable(web.tls->key_file);
    auto made = tls_stream_factory(*web.tls);
    if (!made) return make_error("--web-config " + o.web_config + ": " + made.error());
    streams = std::move(*made);
  }
  std::shared_ptr<backends::BasicAuth> auth;
  if (!web.users.empty()) {
    auto made = backends::BasicAuth::create(web.users);
    if (!made) return make_error("--web-config " + o.web_config + ": " + made.error());
    auth = std::move(*made);
  }
  backends::HttpGate gate;  // basic auth's bcrypt runs on the server's worker thread, not its serving one
  if (auth) gate = [auth](const backends::HttpRequest& r) { return auth->screen(r); };
  auto server = backends::HttpServer::start(*address, make_handler(feed, o.export_options), {}, streams, std::move(gate));
  if (!server) {
    exit_code = kFailure;  // e.g. the address is in use
    return make_error(server.error());
  }
  announce(o, *address, web, (*server)->port());
  return server;
}

}  // namespace vramdoc::cli
