// Readers: our JSON Lines timeline (docs/timeline-format.md) and the shared timeline JSON
// (shared/data/timelines/README.md). Bad input gives an error naming the file and the place.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// The largest byte count a reader accepts (1 EiB): anything above is a corrupt file.
constexpr double kMaxBytes = 1152921504606846976.0;

// A window of a long recording (analyze --since / --until): only the samples and marks with t
// (the recording's clock, seconds) within [since, until] are read. When samples after `until`
// were left out, so is the job's end: its outcome and OOM messages are not the window's.
struct Window {
  std::optional<double> since_seconds, until_seconds;
  bool contains(double t) const { return (!since_seconds || t >= *since_seconds) && (!until_seconds || t <= *until_seconds); }
};

// Reads either format, told apart by the first line. `source` names the input in errors.
// A final line cut short (a file still being written) is skipped, not an error. Our format is
// read line by line into a fixed size (thinning.hpp: a long recording's samples thinned); the
// shared timeline JSON is one document, read whole.
Result<Timeline> read_timeline(std::string_view text, const std::string& source, const Window& window = {});

// The largest timeline file a reader accepts (1 GiB).
constexpr std::uint64_t kMaxTimelineFileBytes = 1ULL << 30;
// The longest line of our format a file may hold (a series line of 4,096 processes is 60 KB).
constexpr std::size_t kMaxTimelineLineBytes = std::size_t{16} << 20;
// Reads and parses a timeline file ("-": standard input), bounded (kMaxTimelineFileBytes); the
// error names the file. Our format streams: the memory used does not grow with the file.
Result<Timeline> read_timeline_file(const std::string& path, const Window& window = {});

// Our JSON Lines format read one line at a time, as it is written: `run` builds its report from
// the lines it writes, never reading its file back. The same checks and result as read_timeline;
// what it holds stays within a fixed size however many lines it is given (thinning.hpp).
class LineReader {
 public:
  explicit LineReader(std::string source, Window window = {});  // `source` names the input in errors
  ~LineReader();
  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;
  // One line without its "\n"; the first is the header. `complete`: the line had its "\n" (a last
  // line cut short that is not JSON is skipped). After an error later lines are ignored.
  void add(std::string_view line, bool complete = true);
  // The timeline of the lines added (ordered, redacted, named), or the first error, naming the line.
  Result<Timeline> finish();

  struct State;  // reader.cpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace vramdoc::timeline
