// A small HTTP/1.1 server for `vramdoc watch --serve` (/metrics), plain or over TLS. One poll()
// thread; bounded connections and request size; read and write deadlines, so a slow, silent or
// non-reading client can neither stall the server nor the sampler that feeds it. Each response
// closes the connection. Only GET and HEAD are accepted.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "backends/watch/socket_stream.hpp"
#include "core/result.hpp"

namespace vramdoc::backends {

// A well-formed request, as the handler sees it.
struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // without the query string
  std::string accept;  // the Accept header, empty when absent
  std::string authorization;  // the Authorization header, empty when absent
};

// What the handler answers; the server adds Content-Length and Connection: close.
struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers = {};  // more, e.g. WWW-Authenticate
};

// Called on the server thread for every well-formed GET / HEAD; must not block for long.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// What a gate says of a request before the handler sees it (basic auth, BasicAuth).
struct GateDecision {
  enum class Kind { Allow, Refuse, Verify } kind = Kind::Allow;
  HttpResponse refusal;  // Refuse
  // Verify: a slow check (bcrypt), run on the server's worker thread while the server goes on
  // serving; it returns nothing to allow the request, else the refusal to send.
  std::function<std::optional<HttpResponse>()> verify;
};

// Decides on each well-formed request, on the server thread: quickly (a slow check is a Verify).
using HttpGate = std::function<GateDecision(const HttpRequest&)>;

// Where to listen: a numeric IPv4 / IPv6 address (or localhost) and a port.
struct ListenAddress {
  std::string host;  // numeric, e.g. "127.0.0.1" or "::1"
  std::uint16_t port = 0;
  bool ipv6 = false;
  bool loopback = false;  // 127.0.0.0/8 or ::1
};

// Parses "127.0.0.1:9400", "[::1]:9400", "localhost:9400", "0.0.0.0:9400", ":9400" or "9400"
// (the last two mean loopback). Host names other than localhost are refused: no DNS.
Result<ListenAddress> parse_listen_address(std::string_view text);

// The bounds that keep one client from holding the server (defaults as documented in docs/watch.md).
struct HttpServerLimits {
  std::size_t max_connections = 64;     // beyond this a new client gets 503 and is closed
  std::size_t max_request_bytes = 8192;  // request line and headers; more gets 431
  int read_timeout_ms = 5000;            // to receive the whole request
  int write_timeout_ms = 10000;          // to take the whole response
};

// A parsed request head, or the status to answer with when it is malformed (400 / 405).
struct ParsedRequest {
  HttpRequest request;
  int error_status = 0;  // 0 when the request is usable
};
// Parses the request line and headers (`head` ends at the blank line).
ParsedRequest parse_request_head(std::string_view head);

// The server: owns its listening socket and thread; destroying it stops serving.
class HttpServer {
 public:
  struct Checks;  // the worker's queue (http_server.cpp)

  // Binds and listens, then serves on a background thread until destroyed; with `tls`, every
  // connection is a TLS stream from it (a handshake first, within the read deadline). The error
  // names the address and the system's reason (e.g. "address already in use").
  // With `gate`, each request is first put to it (a Verify runs on one worker thread; the
  // connection waits, the others are served meanwhile).
  static Result<std::unique_ptr<HttpServer>> start(const ListenAddress& address, HttpHandler handler,
                                                   HttpServerLimits limits = {},
                                                   std::shared_ptr<SocketStreamFactory> tls = nullptr,
                                                   HttpGate gate = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port actually bound (the kernel picks one when asked for port 0).
  std::uint16_t port() const { return port_; }

 private:
  HttpServer(int listen_fd, int wake_read, int wake_write, std::uint16_t port, HttpHandler handler,
             HttpServerLimits limits);
  void loop();
  void work();  // the worker thread: runs the gate's Verify checks in turn

  int listen_fd_;
  int wake_read_;
  int wake_write_;
  std::uint16_t port_;
  HttpHandler handler_;
  HttpServerLimits limits_;
  std::shared_ptr<SocketStreamFactory> tls_;  // null: plain HTTP
  HttpGate gate_;                              // null: every request goes to the handler
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::unique_ptr<Checks> checks_;  // the worker's queue and results
  std::thread worker_;
};

}  // namespace vramdoc::backends
