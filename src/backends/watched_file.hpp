// A file vramdoc reads while a job may write it: run's step-marks file ($VRAMDOC_MARK_FILE), a
// probe trial's log. It is read through the descriptor vramdoc opened, never reopened by path, so
// a job that replaces the path (a link to /dev/zero, a FIFO) changes nothing vramdoc reads; and
// each read is bounded, so a file that grows without end cannot hold a loop.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/result.hpp"

namespace vramdoc::backends {

class WatchedFile {
 public:
  // Creates a new empty file from `pattern` (its last six characters "XXXXXX", mkstemp: mode
  // 0600, a name nobody had) and keeps it open.
  static Result<std::unique_ptr<WatchedFile>> create_temp(std::string pattern);
  // Opens the regular file `path` for reading without following a link or waiting on a FIFO;
  // anything else is refused, saying what it is.
  static Result<std::unique_ptr<WatchedFile>> open(const std::string& path);
  ~WatchedFile();
  WatchedFile(const WatchedFile&) = delete;
  WatchedFile& operator=(const WatchedFile&) = delete;

  const std::string& path() const { return path_; }
  // The next bytes after those read so far, at most `max_bytes` (fewer at the end of the file).
  std::string read_more(std::size_t max_bytes);
  // The file's last `max_bytes` bytes (all of it when shorter), whatever was read before.
  std::string tail(std::size_t max_bytes) const;
  // Removes the path (the name, whatever it now is; the descriptor stays until destruction).
  void remove_path() const;

 private:
  WatchedFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  std::uint64_t offset_ = 0;
};

}  // namespace vramdoc::backends
