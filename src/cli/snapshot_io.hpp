// `vramdoc analyze` of a PyTorch memory snapshot (a pickle, recognised by its first bytes):
// read, analyse, render (docs/snapshots.md).
#pragma once
#include <string>

namespace vramdoc::cli {

// Whether `path` starts like a pickle (PROTO 2-5): analyze then reads it as a snapshot.
bool is_pickle_file(const std::string& path);
// Reads the snapshot at `path`, prints the job report (its diagnosis and the snapshot's section;
// text or JSON), writes the HTML page when `html` is not empty; returns the exit code.
int analyze_snapshot_file(const std::string& path, bool json, const std::string& html);

}  // namespace vramdoc::cli
