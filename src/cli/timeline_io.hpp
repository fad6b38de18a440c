// Shared by `run` and `analyze`: reading a timeline file and writing the reports.
#pragma once
#include <cstdio>
#include <string>

#include "core/result.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::cli {

// Reads and parses a timeline file; the error names the file.
Result<timeline::Timeline> load_timeline(const std::string& path);
// Opens the timeline `run` writes. A name vramdoc chose (`chosen_by_vramdoc`: the default
// vramdoc-PROGRAM-TIME.jsonl) is a new private file, never an existing file or link: `path` gets
// a -2, -3, ... suffix while the name is taken. A name the user gave is opened as given.
Result<std::FILE*> open_timeline_file(std::string& path, bool chosen_by_vramdoc);
// Writes `text` to `path`; the error names the file.
Result<bool> write_text_file(const std::string& path, const std::string& text);

}  // namespace vramdoc::cli
