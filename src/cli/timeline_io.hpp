// Shared by `run` and `analyze`: reading a timeline file and writing the reports.
#pragma once
#include <string>

#include "core/result.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::cli {

// Reads and parses a timeline file; the error names the file.
Result<timeline::Timeline> load_timeline(const std::string& path);
// Writes `text` to `path`; the error names the file.
Result<bool> write_text_file(const std::string& path, const std::string& text);

}  // namespace vramdoc::cli
