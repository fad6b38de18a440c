// Shared by `run` and `analyze`: reading a timeline file, writing the timeline and the reports.
#pragma once
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "core/result.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::cli {

// Reads and parses a timeline file ("-": standard input), bounded (1 GiB); the error names the file.
Result<timeline::Timeline> load_timeline(const std::string& path);
// Writes `text` to `path`; the error names the file.
Result<bool> write_text_file(const std::string& path, const std::string& text);

// The timeline `run` writes while the job runs. The first failed write (a full disk, /dev/full)
// is said on stderr at once, loudly; later lines are dropped; failed() tells the end of the run.
class TimelineFile {
 public:
  // Opens the timeline. A name vramdoc chose (`chosen_by_vramdoc`: the default
  // vramdoc-PROGRAM-TIME.jsonl) is a new private file, never an existing file or link: `path` gets
  // a -2, -3, ... suffix while the name is taken. A name the user gave is opened as given.
  static Result<std::unique_ptr<TimelineFile>> open(std::string& path, bool chosen_by_vramdoc);
  ~TimelineFile();
  // Appends one line and flushes it (thread-safe: the recorder thread writes samples).
  void write(const std::string& line);
  // Closes the file; a failure to close counts as a failed write.
  void close();
  // Closes and removes the file (the job never started).
  void discard();
  bool failed() const;
  // What failed, e.g. "cannot write the timeline /dev/full: No space left on device".
  std::string error() const;

 private:
  TimelineFile(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  void fail_locked(int error_number);
  std::string path_;
  std::FILE* file_;
  mutable std::mutex mutex_;
  std::string error_;
};

// True for the verdicts that name a problem (leak, insufficient, fragmentation): analyze exits 1.
bool is_problem(timeline::Verdict verdict);

// A run that sampled no GPU memory cannot judge: the verdict says the missing sampling (the
// start of `why`, e.g. "libnvidia-ml.so.1 not found: no NVIDIA driver") is the reason, instead of
// asking to record longer. Other verdicts (from an OOM message) stay.
void explain_unsampled(timeline::Diagnosis& d, const std::string& why);

}  // namespace vramdoc::cli
