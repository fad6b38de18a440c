#include "backends/watch/socket_stream.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace vramdoc::backends {

namespace {

class PlainSocketStream final : public SocketStream {
 public:
  explicit PlainSocketStream(int fd) : fd_(fd) {}
  Io handshake() override { return {}; }
  Io read(char* buffer, std::size_t size) override {
    const ssize_t n = recv(fd_, buffer, size, MSG_DONTWAIT);
    if (n > 0) return {IoStatus::Done, static_cast<std::size_t>(n)};
    if (n == 0) return {IoStatus::Closed, 0};
    return {errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? IoStatus::WantRead : IoStatus::Failed, 0};
  }
  Io write(const char* data, std::size_t size) override {
    const ssize_t n = send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return {IoStatus::Done, static_cast<std::size_t>(n)};
    return {errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? IoStatus::WantWrite : IoStatus::Failed, 0};
  }
  void finish() override {}

 private:
  int fd_;
};

}  // namespace

std::unique_ptr<SocketStream> plain_socket_stream(int fd) { return std::make_unique<PlainSocketStream>(fd); }

}  // namespace vramdoc::backends
