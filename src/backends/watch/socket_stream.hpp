// How the HTTP server's connections move their bytes: plain TCP, or TLS (src/tls, reached
// through cli/features.cpp). Every call is non-blocking: one that cannot go on says which way
// the socket must become ready, and the server polls for that.
#pragma once
#include <cstddef>
#include <memory>

namespace vramdoc::backends {

enum class IoStatus {
  Done,       // the call did its work (`bytes` moved; a handshake is complete)
  WantRead,   // call again once the socket is readable
  WantWrite,  // call again once the socket is writable
  Closed,     // the peer closed the connection
  Failed,     // an error: drop the connection
};

struct Io {
  IoStatus status = IoStatus::Done;
  std::size_t bytes = 0;
};

// One connection. It does not own the descriptor: the server closes it.
class SocketStream {
 public:
  virtual ~SocketStream() = default;
  // Done once the connection may carry requests (at once for plain TCP).
  virtual Io handshake() = 0;
  virtual Io read(char* buffer, std::size_t size) = 0;
  virtual Io write(const char* data, std::size_t size) = 0;
  // Ends the stream after the response (TLS: close_notify); best effort, never blocks.
  virtual void finish() = 0;
};

// Makes the stream of each accepted connection.
class SocketStreamFactory {
 public:
  virtual ~SocketStreamFactory() = default;
  virtual std::unique_ptr<SocketStream> wrap(int fd) = 0;
};

// Plain TCP on `fd`.
std::unique_ptr<SocketStream> plain_socket_stream(int fd);

}  // namespace vramdoc::backends
