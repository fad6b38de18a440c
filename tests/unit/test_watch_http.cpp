#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "backends/watch/http_server.hpp"

using namespace vramdoc;
using namespace vramdoc::backends;

namespace {

int connect_to(std::uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  return fd;
}

// Reads until the server closes or `timeout_ms` passes.
std::string read_all(int fd, int timeout_ms = 3000) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string exchange(std::uint16_t port, const std::string& request) {
  int fd = connect_to(port);
  EXPECT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string reply = read_all(fd);
  close(fd);
  return reply;
}

std::unique_ptr<HttpServer> start_server(HttpServerLimits limits = {}) {
  auto address = parse_listen_address("127.0.0.1:0");
  auto server = HttpServer::start(*address, [](const HttpRequest& r) {
    if (r.path == "/metrics") return HttpResponse{200, "text/plain", "metric 1\naccept " + r.accept + "\n"};
    return HttpResponse{404, "text/plain", "not found\n"};
  }, limits);
  EXPECT_TRUE(server.ok()) << (server.ok() ? "" : server.error());
  return std::move(*server);
}

}  // namespace

TEST(WatchHttp, ListenAddressForms) {
  EXPECT_TRUE(parse_listen_address("9400")->loopback);
  EXPECT_EQ(parse_listen_address(":9400")->host, "127.0.0.1");
  EXPECT_TRUE(parse_listen_address("localhost:9400")->loopback);
  EXPECT_TRUE(parse_listen_address("127.1.2.3:1")->loopback);
  EXPECT_TRUE(parse_listen_address("[::1]:9400")->ipv6);
  EXPECT_TRUE(parse_listen_address("[::1]:9400")->loopback);
  EXPECT_FALSE(parse_listen_address("0.0.0.0:9400")->loopback);
  EXPECT_FALSE(parse_listen_address("[::]:9400")->loopback);
  EXPECT_FALSE(parse_listen_address("example.com:9400").ok());
  EXPECT_FALSE(parse_listen_address("127.0.0.1:99999").ok());
  EXPECT_FALSE(parse_listen_address("127.0.0.1:").ok());
}

TEST(WatchHttp, RequestHeadParsing) {
  auto ok = parse_request_head("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\naccept: application/openmetrics-text\r\n");
  EXPECT_EQ(ok.error_status, 0);
  EXPECT_EQ(ok.request.path, "/metrics");
  EXPECT_EQ(ok.request.accept, "application/openmetrics-text");
  EXPECT_EQ(parse_request_head("POST /metrics HTTP/1.1\r\n").error_status, 405);
  EXPECT_EQ(parse_request_head("GET /metrics\r\n").error_status, 400);
  EXPECT_EQ(parse_request_head("GET  /metrics HTTP/1.1\r\n").error_status, 400);
  EXPECT_EQ(parse_request_head("GET metrics HTTP/1.1\r\n").error_status, 400);
  EXPECT_EQ(parse_request_head("GET /m\x01 HTTP/1.1\r\n").error_status, 400);
  EXPECT_EQ(parse_request_head("GET /metrics SPDY/3\r\n").error_status, 400);
}

TEST(WatchHttp, ServesMetricsAndErrors) {
  auto server = start_server();
  std::string reply = exchange(server->port(), "GET /metrics HTTP/1.1\r\nAccept: text/plain\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << reply;
  EXPECT_NE(reply.find("Content-Length: 27\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\r\n\r\nmetric 1\naccept text/plain\n"), std::string::npos);
  std::string head = exchange(server->port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");  // no body
  EXPECT_EQ(exchange(server->port(), "GET /nope HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0U);
  std::string post = exchange(server->port(), "DELETE /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0U);
  EXPECT_NE(post.find("Allow: GET, HEAD"), std::string::npos);
  EXPECT_EQ(exchange(server->port(), "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0U);
  EXPECT_EQ(exchange(server->port(), "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 431", 0), 0U);
}

TEST(WatchHttp, SilentClientIsDroppedAndDoesNotBlockOthers) {
  HttpServerLimits limits;
  limits.read_timeout_ms = 300;
  auto server = start_server(limits);
  int silent = connect_to(server->port());
  auto start = std::chrono::steady_clock::now();
  std::string reply = exchange(server->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0U);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));  // not behind the silent one
  EXPECT_EQ(read_all(silent, 3000), "");  // closed by the server after its read timeout
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2000));
  close(silent);
}

TEST(WatchHttp, ConnectionsBeyondTheLimitGet503) {
  HttpServerLimits limits;
  limits.max_connections = 2;
  auto server = start_server(limits);
  int a = connect_to(server->port());
  int b = connect_to(server->port());
  usleep(100 * 1000);  // let the server accept both
  EXPECT_EQ(exchange(server->port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 503", 0), 0U);
  close(a);
  close(b);
  usleep(100 * 1000);
  EXPECT_EQ(exchange(server->port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0U);
}

TEST(WatchHttp, BusyPortIsAClearError) {
  auto server = start_server();
  auto address = parse_listen_address("127.0.0.1:" + std::to_string(server->port()));
  auto second = HttpServer::start(*address, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().find("cannot listen on 127.0.0.1:"), std::string::npos) << second.error();
}

TEST(WatchHttp, AuthorizationReachesTheHandlerAndExtraHeadersTheClient) {
  auto parsed = parse_request_head("GET /metrics HTTP/1.1\r\nHost: x\r\nauthorization:  Basic YTpi \r\n");
  EXPECT_EQ(parsed.error_status, 0);
  EXPECT_EQ(parsed.request.authorization, "Basic YTpi");
  auto address = parse_listen_address("127.0.0.1:0");
  auto server = HttpServer::start(*address, [](const HttpRequest& r) {
    if (r.authorization.empty()) return HttpResponse{401, "text/plain", "no\n", {{"WWW-Authenticate", "Basic realm=\"t\""}}};
    return HttpResponse{200, "text/plain", "yes " + r.authorization + "\n"};
  });
  ASSERT_TRUE(server.ok());
  const std::string refused = exchange((*server)->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0U) << refused;
  EXPECT_NE(refused.find("\r\nWWW-Authenticate: Basic realm=\"t\"\r\n"), std::string::npos) << refused;
  const std::string allowed = exchange((*server)->port(), "GET /metrics HTTP/1.1\r\nAuthorization: Basic YTpi\r\n\r\n");
  EXPECT_NE(allowed.find("yes Basic YTpi"), std::string::npos) << allowed;
}

// Regression (issue 25): one bcrypt check ran on the server's only thread and stalled every other
// scrape for seconds. A gate's slow check runs on the worker: while one is held, the server still
// answers other requests; when it ends, its own request is answered.
TEST(WatchHttp, ASlowGateCheckDoesNotStallOtherScrapes) {
  std::mutex m;
  std::condition_variable cv;
  bool release = false, started = false;
  HttpGate gate = [&](const HttpRequest& r) -> GateDecision {
    if (r.path != "/slow") return {};
    return {GateDecision::Kind::Verify, {}, [&]() -> std::optional<HttpResponse> {
              std::unique_lock lock(m);
              started = true;
              cv.notify_all();
              cv.wait(lock, [&] { return release; });
              return std::nullopt;
            }};
  };
  auto address = parse_listen_address("127.0.0.1:0");
  auto server = HttpServer::start(*address, [](const HttpRequest& r) { return HttpResponse{200, "text/plain", r.path + "\n"}; },
                                  {}, nullptr, gate);
  ASSERT_TRUE(server.ok()) << server.error();
  const std::uint16_t port = (*server)->port();
  const int slow = connect_to(port);
  const std::string request = "GET /slow HTTP/1.1\r\n\r\n";
  ASSERT_EQ(send(slow, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return started; });
  }
  const std::string other = exchange(port, "GET /metrics HTTP/1.1\r\n\r\n");  // served while the check is held
  EXPECT_EQ(other.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << other;
  EXPECT_NE(other.find("/metrics"), std::string::npos) << other;
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  const std::string answered = read_all(slow);
  close(slow);
  EXPECT_EQ(answered.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << answered;
  EXPECT_NE(answered.find("/slow"), std::string::npos) << answered;
}

// A gate's refusal is the answer; its Allow lets the handler answer.
TEST(WatchHttp, AGateRefusesOrLetsThrough) {
  HttpGate gate = [](const HttpRequest& r) -> GateDecision {
    if (r.path == "/no") return {GateDecision::Kind::Refuse, HttpResponse{401, "text/plain", "no\n"}, nullptr};
    if (r.path == "/later-no")
      return {GateDecision::Kind::Verify, {}, []() -> std::optional<HttpResponse> { return HttpResponse{429, "text/plain", "wait\n"}; }};
    return {};
  };
  auto address = parse_listen_address("127.0.0.1:0");
  auto server = HttpServer::start(*address, [](const HttpRequest&) { return HttpResponse{200, "text/plain", "yes\n"}; }, {},
                                  nullptr, gate);
  ASSERT_TRUE(server.ok()) << server.error();
  EXPECT_EQ(exchange((*server)->port(), "GET /no HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 401", 0), 0U);
  EXPECT_EQ(exchange((*server)->port(), "GET /later-no HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 429", 0), 0U);
  EXPECT_EQ(exchange((*server)->port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0U);
}
