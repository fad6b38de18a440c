#include "backends/run/timeline_file.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "backends/private_files.hpp"

namespace vramdoc::backends {

namespace {

// The default name: a new private file (docs/security.md); a name the user gave: opened as given.
Result<std::FILE*> open_timeline_file(std::string& path, bool chosen_by_vramdoc) {
  if (!chosen_by_vramdoc) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return make_error("cannot write " + path + ": " + std::strerror(errno));
    return f;
  }
  const std::string stem = path.ends_with(".jsonl") ? path.substr(0, path.size() - 6) : path;
  for (int n = 1; n <= 100; ++n) {
    const std::string name = n == 1 ? path : stem + "-" + std::to_string(n) + ".jsonl";
    auto fd = open_private_file(name, true);
    if (!fd && errno == EEXIST) continue;
    if (!fd) return make_error(fd.error());
    path = name;
    std::FILE* f = fdopen(*fd, "w");
    if (!f) close(*fd);
    if (!f) return make_error("cannot write " + path + ": " + std::strerror(errno));
    return f;
  }
  return make_error("cannot write " + path + ": 100 files of that name exist; give --out");
}

}  // namespace

Result<std::unique_ptr<TimelineFile>> TimelineFile::open(std::string& path, bool chosen_by_vramdoc,
                                                         std::function<void(const std::string&)> note) {
  auto file = open_timeline_file(path, chosen_by_vramdoc);
  if (!file) return make_error(file.error());
  return std::unique_ptr<TimelineFile>(new TimelineFile(path, *file, std::move(note)));
}

TimelineFile::~TimelineFile() { close(); }

void TimelineFile::fail_locked(int error_number) {
  if (!error_.empty()) return;
  error_ = "cannot write the timeline " + path_ + ": " + std::strerror(error_number);
  if (note_) note_("WARNING: " + error_ + "; the job keeps running, its timeline is lost");
}

void TimelineFile::write(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (!file_ || !error_.empty()) return;
  errno = 0;
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0) fail_locked(errno ? errno : EIO);
}

void TimelineFile::close() {
  std::lock_guard lock(mutex_);
  if (!file_) return;
  errno = 0;
  if (std::fclose(file_) != 0) fail_locked(errno ? errno : EIO);
  file_ = nullptr;
}

void TimelineFile::discard() {
  close();
  std::remove(path_.c_str());
}

bool TimelineFile::failed() const {
  std::lock_guard lock(mutex_);
  return !error_.empty();
}

std::string TimelineFile::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace vramdoc::backends
