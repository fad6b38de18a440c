#include "backends/watch/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <cstring>
#include <vector>

namespace vramdoc::backends {

namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Internal Server Error";
  }
}

std::string serialize(const HttpResponse& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (r.status == 405) out += "Allow: GET, HEAD\r\n";
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

HttpResponse error_response(int status) {
  return {status, "text/plain; charset=utf-8", std::string(reason(status)) + "\n"};
}

struct Connection {
  int fd;
  std::unique_ptr<SocketStream> stream;  // plain TCP or TLS
  std::string in;
  std::string out;
  std::size_t sent = 0;
  // Waiting: the gate's slow check of `request` runs on the worker thread.
  enum class Phase { Handshake, Reading, Waiting, Writing, Draining } phase = Phase::Reading;
  short events = POLLIN;  // what the stream waits for
  Clock::time_point deadline;
  std::uint64_t id = 0;   // names the connection to the worker
  HttpRequest request;    // Waiting: what is answered once the check is done
};

// What the connections' steps need from the server.
struct Context {
  const HttpServerLimits& limits;
  const HttpHandler& handler;
  const HttpGate& gate;
  // Hands a slow check to the worker thread; its result comes back for connection `id`.
  std::function<void(std::uint64_t id, std::function<std::optional<HttpResponse>()>)> enqueue;
};

// Answers `r` on `c` from now on (the write deadline starts).
void respond(Connection& c, const HttpResponse& r, bool head_only, const HttpServerLimits& limits) {
  c.out = serialize(r, head_only);
  c.phase = Connection::Phase::Writing;
  c.events = POLLOUT;
  c.deadline = Clock::now() + std::chrono::milliseconds(limits.write_timeout_ms);
}

// Fills `fds`: the listener, the wake pipe, the worker's results pipe, then one entry per
// connection in order. Returns the poll timeout: a second at most, less when a connection's
// deadline comes sooner.
constexpr std::size_t kFixedFds = 3;
int poll_set(int listen_fd, int wake_fd, int done_fd, const std::vector<Connection>& conns, std::vector<pollfd>& fds) {
  fds.assign({{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}, {done_fd, POLLIN, 0}});
  const auto now = Clock::now();
  int timeout_ms = 1000;
  for (const auto& c : conns) {
    fds.push_back({c.fd, c.events, 0});
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count();
    timeout_ms = std::clamp(static_cast<int>(left) + 1, 0, timeout_ms);
  }
  return timeout_ms;
}

// Marks a connection for closing at the next sweep.
void drop(Connection& c) { c.deadline = Clock::time_point::min(); }

// After a stream call that could not go on: poll for what it waits for, or drop the connection.
void wait_for(Connection& c, IoStatus status) {
  if (status == IoStatus::WantRead) c.events = POLLIN;
  else if (status == IoStatus::WantWrite) c.events = POLLOUT;
  else drop(c);  // closed, failed, or a TLS handshake that did not succeed
}

// Discards what the client still sends until it closes, so that closing our side does not reset
// the connection before the client has read the response. (Raw bytes: TLS records are discarded too.)
void drain(Connection& c) {
  char buf[4096];
  ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) drop(c);
}

// Answers a well-formed request: the handler's response, unless the gate refuses it; a gate's
// slow check makes the connection wait for the worker (nothing is read or written meanwhile).
void answer(Connection& c, const HttpRequest& request, const Context& ctx) {
  const bool head = request.method == "HEAD";
  GateDecision d = ctx.gate ? ctx.gate(request) : GateDecision{};
  if (d.kind == GateDecision::Kind::Allow) return respond(c, ctx.handler(request), head, ctx.limits);
  if (d.kind == GateDecision::Kind::Refuse) return respond(c, d.refusal, head, ctx.limits);
  c.request = request;
  c.phase = Connection::Phase::Waiting;
  c.events = 0;  // poll still reports a client that hung up (POLLHUP / POLLERR): it is dropped
  c.deadline = Clock::now() + std::chrono::milliseconds(ctx.limits.write_timeout_ms);
  ctx.enqueue(c.id, std::move(d.verify));
}

// Reads what arrived (all of it: TLS may hold decrypted bytes the socket no longer signals);
// once the head is complete (or too long), the response is queued.
void read_request(Connection& c, const Context& ctx) {
  const HttpServerLimits& limits = ctx.limits;
  char buf[4096];
  for (;;) {
    const Io io = c.stream->read(buf, sizeof buf);
    if (io.status != IoStatus::Done) return wait_for(c, io.status);
    c.in.append(buf, io.bytes);
    auto end = c.in.find("\r\n\r\n");
    if (end == std::string::npos && c.in.size() > limits.max_request_bytes) {
      return respond(c, error_response(431), false, limits);
    } else if (end != std::string::npos) {
      ParsedRequest parsed = parse_request_head(std::string_view(c.in).substr(0, end + 2));
      if (parsed.error_status) return respond(c, error_response(parsed.error_status), false, limits);
      return answer(c, parsed.request, ctx);
    }
  }
}

// The TLS handshake (at once for plain TCP); then the request may already be waiting.
void handshake(Connection& c, const Context& ctx) {
  const Io io = c.stream->handshake();
  if (io.status != IoStatus::Done) return wait_for(c, io.status);
  c.phase = Connection::Phase::Reading;
  c.events = POLLIN;
  read_request(c, ctx);
}

// Sends what the socket takes; once all is sent, our side is shut and the connection drains.
void write_response(Connection& c, const HttpServerLimits& limits) {
  while (c.sent < c.out.size()) {
    const Io io = c.stream->write(c.out.data() + c.sent, c.out.size() - c.sent);
    if (io.status != IoStatus::Done) return wait_for(c, io.status);
    c.sent += io.bytes;
  }
  c.stream->finish();
  shutdown(c.fd, SHUT_WR);
  c.phase = Connection::Phase::Draining;
  c.events = POLLIN;
  c.deadline = Clock::now() + std::chrono::milliseconds(std::min(limits.read_timeout_ms, 1000));
}

// One step of a connection that poll() reported ready, by its phase.
void advance(Connection& c, short revents, const Context& ctx) {
  switch (c.phase) {
    case Connection::Phase::Handshake: return handshake(c, ctx);
    case Connection::Phase::Draining: return drain(c);
    case Connection::Phase::Reading: return read_request(c, ctx);
    case Connection::Phase::Waiting: if (revents & (POLLHUP | POLLERR)) drop(c); return;
    case Connection::Phase::Writing: return write_response(c, ctx.limits);
  }
}

// Closes every connection that is finished, gone, or past its deadline (a slow client is dropped).
void close_finished(std::vector<Connection>& conns) {
  const auto now = Clock::now();
  std::erase_if(conns, [&](Connection& c) {
    if (c.deadline > now) return false;
    c.stream.reset();  // before its descriptor goes
    close(c.fd);
    return true;
  });
}

// Accepts every waiting client; beyond max_connections a client gets 503 (plain HTTP; a TLS
// client is just closed) and is closed. The read deadline covers the TLS handshake too.
void accept_clients(int listen_fd, std::vector<Connection>& conns, const HttpServerLimits& limits,
                    SocketStreamFactory* tls, std::uint64_t& next_id) {
  for (int fd; (fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
    std::unique_ptr<SocketStream> stream = conns.size() >= limits.max_connections ? nullptr
                                     : tls                                 ? tls->wrap(fd)
                                                                           : plain_socket_stream(fd);
    if (!stream) {
      std::string busy = serialize(error_response(503), false);
      if (!tls) (void)!send(fd, busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      close(fd);
      continue;
    }
    Connection c{fd, std::move(stream), {}, {}, 0, tls ? Connection::Phase::Handshake : Connection::Phase::Reading,
                 POLLIN, Clock::now() + std::chrono::milliseconds(limits.read_timeout_ms), ++next_id, {}};
    conns.push_back(std::move(c));
  }
}

}  // namespace

// The gate's slow checks, in turn on the worker thread; their results back to the server thread.
struct HttpServer::Checks {
  using Check = std::function<std::optional<HttpResponse>()>;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::pair<std::uint64_t, Check>> queue;
  std::vector<std::pair<std::uint64_t, std::optional<HttpResponse>>> done;
  bool stop = false;
  int done_read = -1, done_write = -1;  // a byte per result wakes the server's poll()
  ~Checks() {
    if (done_read >= 0) close(done_read);
    if (done_write >= 0) close(done_write);
  }
};

Result<ListenAddress> parse_listen_address(std::string_view text) {
  ListenAddress a;
  std::string host;
  std::string port;
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    port = std::string(text);
  } else {
    host = std::string(text.substr(0, colon));
    port = std::string(text.substr(colon + 1));
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    return make_error("not a listen address: '" + std::string(text) + "' (expected e.g. 127.0.0.1:9400)");
  a.port = static_cast<std::uint16_t>(p);
  a.host = host;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    a.loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    a.ipv6 = true;
    a.loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  } else {
    return make_error("'" + host + "' is not a numeric address: give an IP (127.0.0.1, 0.0.0.0, ::1) or localhost");
  }
  return a;
}

ParsedRequest parse_request_head(std::string_view head) {
  ParsedRequest parsed;
  auto line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  bool printable = std::all_of(line.begin(), line.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (!printable || sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos ||
      sp1 == 0 || sp2 == sp1 + 1 || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) {
    parsed.error_status = 400;
    return parsed;
  }
  parsed.request.method = std::string(line.substr(0, sp1));
  std::string target(line.substr(sp1 + 1, sp2 - sp1 - 1));
  if (target.front() != '/') {
    parsed.error_status = 400;
    return parsed;
  }
  parsed.request.path = target.substr(0, target.find('?'));
  if (parsed.request.method != "GET" && parsed.request.method != "HEAD") parsed.error_status = 405;
  std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    auto end = head.find("\r\n", pos);
    std::string_view header = head.substr(pos, end == std::string_view::npos ? head.size() - pos : end - pos);
    auto colon = header.find(':');
    if (colon != std::string_view::npos) {
      const std::string name = lower(header.substr(0, colon));
      auto value = header.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      if (name == "accept") parsed.request.accept = std::string(value);
      if (name == "authorization") parsed.request.authorization = std::string(value);
    }
    if (end == std::string_view::npos) break;
    pos = end + 2;
  }
  return parsed;
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ListenAddress& address, HttpHandler handler,
                                                      HttpServerLimits limits, std::shared_ptr<SocketStreamFactory> tls,
                                                      HttpGate gate) {
  int family = address.ipv6 ? AF_INET6 : AF_INET;
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("cannot create a socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (address.ipv6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&storage);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(address.port);
    inet_pton(AF_INET6, address.host.c_str(), &sa->sin6_addr);
    length = sizeof *sa;
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&storage);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(address.port);
    inet_pton(AF_INET, address.host.c_str(), &sa->sin_addr);
    length = sizeof *sa;
  }
  std::string where = address.host + ":" + std::to_string(address.port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 || listen(fd, 64) != 0) {
    std::string why = std::strerror(errno);
    close(fd);
    return make_error("cannot listen on " + where + ": " + why);
  }
  getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
  std::uint16_t port = ntohs(address.ipv6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(fd);
    return make_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  auto checks = std::make_unique<Checks>();
  int done[2];
  if (pipe2(done, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(fd), close(wake[0]), close(wake[1]);
    return make_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  checks->done_read = done[0], checks->done_write = done[1];
  std::unique_ptr<HttpServer> server(new HttpServer(fd, wake[0], wake[1], port, std::move(handler), limits));
  server->tls_ = std::move(tls);
  server->gate_ = std::move(gate);
  server->checks_ = std::move(checks);
  server->worker_ = std::thread([s = server.get()] { s->work(); });
  server->thread_ = std::thread([s = server.get()] { s->loop(); });
  return server;
}

HttpServer::HttpServer(int listen_fd, int wake_read, int wake_write, std::uint16_t port, HttpHandler handler,
                       HttpServerLimits limits)
    : listen_fd_(listen_fd), wake_read_(wake_read), wake_write_(wake_write), port_(port),
      handler_(std::move(handler)), limits_(limits) {}

HttpServer::~HttpServer() {
  stop_ = true;
  char byte = 1;
  (void)!write(wake_write_, &byte, 1);
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(checks_->mutex);
    checks_->stop = true;
  }
  checks_->wake.notify_all();
  if (worker_.joinable()) worker_.join();  // a check in progress ends first (bcrypt: bounded by its cost)
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

namespace {

// Answers the connections whose checks the worker finished (a connection gone meanwhile is skipped).
void finish_checks(HttpServer::Checks& checks, std::vector<Connection>& conns, const Context& ctx) {
  char bytes[64];
  while (read(checks.done_read, bytes, sizeof bytes) > 0) {
  }
  std::vector<std::pair<std::uint64_t, std::optional<HttpResponse>>> done;
  {
    std::lock_guard lock(checks.mutex);
    done.swap(checks.done);
  }
  for (auto& [id, refusal] : done) {
    for (auto& c : conns) {
      if (c.id != id || c.phase != Connection::Phase::Waiting) continue;
      const bool head = c.request.method == "HEAD";
      respond(c, refusal ? *refusal : ctx.handler(c.request), head, ctx.limits);
    }
  }
}

}  // namespace

void HttpServer::work() {
  for (;;) {
    std::unique_lock lock(checks_->mutex);
    checks_->wake.wait(lock, [&] { return checks_->stop || !checks_->queue.empty(); });
    if (checks_->stop) return;
    auto [id, check] = std::move(checks_->queue.front());
    checks_->queue.pop_front();
    lock.unlock();
    auto result = check();
    lock.lock();
    checks_->done.emplace_back(id, std::move(result));
    lock.unlock();
    char byte = 1;
    (void)!write(checks_->done_write, &byte, 1);
  }
}

void HttpServer::loop() {
  std::vector<Connection> conns;
  std::vector<pollfd> fds;
  std::uint64_t next_id = 0;
  const Context ctx{limits_, handler_, gate_, [this](std::uint64_t id, Checks::Check check) {
                      {
                        std::lock_guard lock(checks_->mutex);
                        checks_->queue.emplace_back(id, std::move(check));
                      }
                      checks_->wake.notify_one();
                    }};
  while (!stop_) {
    const int timeout_ms = poll_set(listen_fd_, wake_read_, checks_->done_read, conns, fds);
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;  // woken to stop
    for (std::size_t i = 0; i < conns.size(); ++i) {
      if (fds[i + kFixedFds].revents) advance(conns[i], fds[i + kFixedFds].revents, ctx);
    }
    if (fds[2].revents & POLLIN) finish_checks(*checks_, conns, ctx);
    close_finished(conns);
    if (fds[0].revents & POLLIN) accept_clients(listen_fd_, conns, limits_, tls_.get(), next_id);
  }
  for (auto& c : conns) {
    c.stream.reset();
    close(c.fd);
  }
}

}  // namespace vramdoc::backends
