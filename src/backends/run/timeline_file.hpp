// The timeline file `run` writes while the job runs (docs/timeline-format.md).
#pragma once
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/result.hpp"

namespace vramdoc::backends {

// The timeline `run` writes while the job runs. The first failed write (a full disk, /dev/full)
// is said at once, loudly, through `note`; later lines are dropped; failed() tells the end of the run.
class TimelineFile {
 public:
  // Opens the timeline. A name vramdoc chose (`chosen_by_vramdoc`: the default
  // vramdoc-PROGRAM-TIME.jsonl) is a new private file, never an existing file or link: `path` gets
  // a -2, -3, ... suffix while the name is taken. A name the user gave is opened as given.
  // `note` gets the warning of the first failed write (from whichever thread wrote).
  static Result<std::unique_ptr<TimelineFile>> open(std::string& path, bool chosen_by_vramdoc,
                                                    std::function<void(const std::string&)> note);
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
  TimelineFile(std::string path, std::FILE* file, std::function<void(const std::string&)> note)
      : path_(std::move(path)), file_(file), note_(std::move(note)) {}
  void fail_locked(int error_number);
  std::string path_;
  std::FILE* file_;
  std::function<void(const std::string&)> note_;
  mutable std::mutex mutex_;
  std::string error_;
};

}  // namespace vramdoc::backends
