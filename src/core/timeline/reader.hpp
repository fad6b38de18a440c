// Readers: our JSON Lines timeline (docs/timeline-format.md) and the shared timeline JSON
// (shared/data/timelines/README.md). Bad input gives an error naming the file and the place.
#pragma once
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

}  // namespace vramdoc::timeline
