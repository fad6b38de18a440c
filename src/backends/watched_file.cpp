#include "backends/watched_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace vramdoc::backends {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Reads up to `size` bytes at `offset`, retrying interrupted and short reads; what was read.
std::string read_at(int fd, std::uint64_t offset, std::size_t size) {
  std::string out(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, out.data() + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace

Result<std::unique_ptr<WatchedFile>> WatchedFile::create_temp(std::string pattern) {
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) return make_error("cannot create " + pattern + ": " + std::strerror(errno));
  return std::unique_ptr<WatchedFile>(new WatchedFile(fd, std::move(pattern)));
}

Result<std::unique_ptr<WatchedFile>> WatchedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return make_error("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string what = S_ISREG(st.st_mode) ? std::string("cannot be checked") : kind_of(st.st_mode);
    ::close(fd);
    return make_error(path + " is " + what + ", not a file vramdoc can read");
  }
  return std::unique_ptr<WatchedFile>(new WatchedFile(fd, path));
}

WatchedFile::~WatchedFile() { ::close(fd_); }

std::string WatchedFile::read_more(std::size_t max_bytes) {
  struct stat st {};  // what is there to read now (no buffer of max_bytes for nothing)
  if (::fstat(fd_, &st) != 0 || st.st_size <= 0 || static_cast<std::uint64_t>(st.st_size) <= offset_) return "";
  const std::uint64_t available = static_cast<std::uint64_t>(st.st_size) - offset_;
  std::string bytes = read_at(fd_, offset_, static_cast<std::size_t>(std::min<std::uint64_t>(available, max_bytes)));
  offset_ += bytes.size();
  return bytes;
}

std::string WatchedFile::tail(std::size_t max_bytes) const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size <= 0) return "";
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t start = size > max_bytes ? size - max_bytes : 0;
  return read_at(fd_, start, static_cast<std::size_t>(size - start));
}

void WatchedFile::remove_path() const { std::remove(path_.c_str()); }

}  // namespace vramdoc::backends
