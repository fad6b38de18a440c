#include "cli/timeline_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include "backends/private_files.hpp"
#include "core/input_file.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/reader.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

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
    auto fd = backends::open_private_file(name, true);
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

Result<timeline::Timeline> load_timeline(const std::string& path) {
  auto text = read_input_file(path, GiB);
  if (!text) return make_error(text.error());
  return timeline::read_timeline(*text, input_name(path));
}

Result<bool> write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error("cannot write " + path + ": " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return make_error("cannot write " + path + ": " + std::strerror(errno));
  return true;
}

Result<std::unique_ptr<TimelineFile>> TimelineFile::open(std::string& path, bool chosen_by_vramdoc) {
  auto file = open_timeline_file(path, chosen_by_vramdoc);
  if (!file) return make_error(file.error());
  return std::unique_ptr<TimelineFile>(new TimelineFile(path, *file));
}

TimelineFile::~TimelineFile() { close(); }

void TimelineFile::fail_locked(int error_number) {
  if (!error_.empty()) return;
  error_ = "cannot write the timeline " + path_ + ": " + std::strerror(error_number);
  std::fprintf(stderr, "vramdoc run: WARNING: %s; the job keeps running, its timeline is lost\n", error_.c_str());
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

bool is_problem(timeline::Verdict verdict) {
  using timeline::Verdict;
  return verdict == Verdict::Leak || verdict == Verdict::Insufficient || verdict == Verdict::Fragmentation;
}

void explain_unsampled(timeline::Diagnosis& d, const std::string& why) {
  if (d.verdict != timeline::Verdict::Inconclusive) return;
  std::string reason = why.substr(0, std::min(why.find(" ("), why.find(": ")));  // the start line said the rest
  if (reason.ends_with("not found")) reason += ": no NVIDIA driver";
  d.to_settle = "no GPU memory was sampled (" + reason + "), so vramdoc cannot tell a leak from a job too big";
  d.summary = timeline::summary_for(d);
  d.remedies = {"Run the job where the NVIDIA driver is installed (nvidia-smi lists the GPUs), then vramdoc run again."};
}

}  // namespace vramdoc::cli
