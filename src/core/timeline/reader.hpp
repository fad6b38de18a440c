// Readers: our JSON Lines timeline (docs/timeline-format.md) and the shared timeline JSON
// (shared/data/timelines/README.md). Bad input gives an error naming the file and the place.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// The largest byte count a reader accepts (1 EiB): anything above is a corrupt file.
constexpr double kMaxBytes = 1152921504606846976.0;

// Reads either format, told apart by the first line. `source` names the input in errors.
// A final line cut short (a file still being written) is skipped, not an error.
Result<Timeline> read_timeline(std::string_view text, const std::string& source);

// The largest timeline file a reader accepts (1 GiB).
constexpr std::uint64_t kMaxTimelineFileBytes = 1ULL << 30;
// Reads and parses a timeline file ("-": standard input), bounded (kMaxTimelineFileBytes); the error names the file.
Result<Timeline> read_timeline_file(const std::string& path);

// Our JSON Lines format read one line at a time, as it is written: `run` builds its report from
// the lines it writes, never reading its file back. The same checks and result as read_timeline.
class LineReader {
 public:
  explicit LineReader(std::string source);  // `source` names the input in errors
  ~LineReader();
  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;
  // One line without its "\n"; the first is the header. `complete`: the line had its "\n" (a last
  // line cut short that is not JSON is skipped). After an error later lines are ignored.
  void add(std::string_view line, bool complete = true);
  // The timeline of the lines added (ordered, redacted, named), or the first error, naming the line.
  Result<Timeline> finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace vramdoc::timeline
