// PyTorch memory snapshot files (torch.cuda.memory._dump_snapshot): told by their first bytes,
// read and analysed (`analyze snap.pickle`, run --trace-python's python.PID.oom.pickle).
#pragma once
#include <string>

#include "core/result.hpp"
#include "core/snapshot/analysis.hpp"

namespace vramdoc::snapshot {

// Whether `path` is a regular file that starts like a pickle (PROTO 2-5): analyze then reads it
// as a snapshot. False for "-" and for what is not a regular file.
bool is_pickle_file(const std::string& path);
// Reads and analyses the snapshot at `path`; the error names the file and the byte at fault.
Result<SnapshotReport> read_snapshot_report(const std::string& path);

}  // namespace vramdoc::snapshot
