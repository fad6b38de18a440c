// Lines of the marker file ($VRAMDOC_MARK_FILE) that a job, or vramdoc's step hook, appends to:
// free text ("step 12", "epoch 3"), optionally followed by key=value fields
// (docs/run-analyze.md, "Step marks"):  step 12 allocated=1048576 reserved=2097152 peak=1572864 pid=4242 rank=1
#pragma once
#include <optional>
#include <string_view>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// A marker line as a mark (t left 0). The fields allocated=, reserved=, peak=, pid= and rank= are taken
// out of the text (read when they are plain numbers in range; rank is the hook's, vramdoc reads
// ranks from the process's environment); the rest is the label, unchanged when there are no such
// fields (older marker lines read as before). Empty for a line with no label.
std::optional<Mark> parse_marker_line(std::string_view line);

}  // namespace vramdoc::timeline
