#include "backends/watch/exporter.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "backends/watch/basic_auth.hpp"
#include "core/input_file.hpp"
#include "core/watch/prometheus.hpp"

namespace vramdoc::backends {

namespace {

// The page `/` answers with: where the metrics are.
HttpResponse index_page() {
  return {200, "text/html; charset=utf-8",
          "<!doctype html><title>vramdoc watch</title><h1>vramdoc watch</h1>"
          "<p>GPU and per-process memory metrics: <a href=\"/metrics\">/metrics</a></p>\n"};
}

// Answers / and /metrics from the newest snapshot (with users, the server's gate let it through).
HttpHandler make_handler(ExporterFeed& feed, watch::ExportOptions options) {
  return [&feed, options](const HttpRequest& r) -> HttpResponse {
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
void warn_if_key_readable(const std::string& key_file, const Note& note) {
  struct stat st {};
  if (::stat(key_file.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)))
    note("warning: the private key " + key_file + " is readable by other users (chmod 600 it)");
}

// What anyone who reaches a non-loopback exporter sees, and how it is protected.
void announce(const WatchOptions& o, const ListenAddress& address, const watch::WebConfig& web, std::uint16_t port,
              const Note& note) {
  const bool tls = web.tls.has_value();
  if (!address.loopback && !tls && web.users.empty()) {
    note("warning: serving on " + o.serve + ", reachable from other machines: anyone who can reach this port sees the "
         "GPUs' processes, their users and programs" + std::string(o.export_options.command ? " and (redacted) command lines" : "") +
         "; --web-config adds TLS and basic auth (docs/security.md)");
  } else if (!address.loopback && !tls) {
    note("warning: basic auth without TLS: passwords cross the network in clear text (add tls_server_config)");
  } else if (!address.loopback && web.users.empty() && web.tls->client_auth != watch::ClientAuth::RequireAndVerifyClientCert) {
    note("warning: TLS without authentication: anyone who can reach this port reads the metrics (add basic_auth_users, "
         "or client_auth_type RequireAndVerifyClientCert)");
  }
  const std::string host = address.ipv6 ? "[" + address.host + "]" : address.host;
  note("serving " + std::string(tls ? "https" : "http") + "://" + host + ":" + std::to_string(port) + "/metrics" +
       (web.users.empty() ? "" : " with basic auth") + " (Ctrl-C stops)");
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

Result<std::unique_ptr<HttpServer>> start_exporter(const WatchOptions& o, ExporterFeed& feed, const Note& note, bool& bad_input) {
  bad_input = true;
  auto address = parse_listen_address(o.serve);
  if (!address) return make_error("--serve: " + address.error());
  watch::WebConfig web;
  if (!o.web_config.empty()) {
    auto loaded = load_web_config(o.web_config);
    if (!loaded) return make_error(loaded.error());
    web = std::move(*loaded);
  }
  std::shared_ptr<SocketStreamFactory> streams;
  if (web.tls) {
    warn_if_key_readable(web.tls->key_file, note);
    auto made = o.tls ? o.tls(*web.tls) : Result<std::unique_ptr<SocketStreamFactory>>(make_error("no TLS"));
    if (!made) return make_error("--web-config " + o.web_config + ": " + made.error());
    streams = std::move(*made);
  }
  std::shared_ptr<BasicAuth> auth;
  if (!web.users.empty()) {
    auto made = BasicAuth::create(web.users);
    if (!made) return make_error("--web-config " + o.web_config + ": " + made.error());
    auth = std::move(*made);
  }
  HttpGate gate;  // basic auth's bcrypt runs on the server's worker thread, not its serving one
  if (auth) gate = [auth](const HttpRequest& r) { return auth->screen(r); };
  auto server = HttpServer::start(*address, make_handler(feed, o.export_options), {}, streams, std::move(gate));
  if (!server) {
    bad_input = false;  // e.g. the address is in use
    return make_error(server.error());
  }
  announce(o, *address, web, (*server)->port(), note);
  return server;
}

}  // namespace vramdoc::backends
