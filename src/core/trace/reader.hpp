// Reading and writing .vdt trace files (docs/trace-format.md). Hostile input gives an error
// naming the offset, never a crash; a record cut off at the end (a killed program) is dropped
// and flagged, so the rest of the trace still counts.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.hpp"
#include "core/trace/format.hpp"

namespace vramdoc::trace {

// A shared object or executable mapped in the traced process.
struct ModuleRecord {
  std::uint64_t load_bias = 0;  // runtime address - file address (dlpi_addr)
  std::uint64_t start = 0;      // [start, end): its executable segments, runtime addresses
  std::uint64_t end = 0;
  std::string path;
  std::string build_id;         // raw bytes of its GNU build-id; empty when none (or a version 1 trace)
  bool operator==(const ModuleRecord&) const = default;
};

using Record = std::variant<ModuleRecord, FrameRecord, EventRecord>;

// One process's trace, records in file order.
struct Trace {
  std::uint32_t version = kVersion;
  std::uint32_t pid = 0;
  std::uint64_t start_unix_ns = 0;
  std::vector<Record> records;
  bool truncated = false;  // the last record was cut off (the process was killed mid-write)
};

// Parses a whole trace file's bytes.
Result<Trace> parse_trace(std::string_view bytes);
// Reads and parses the file at `path` (at most 4 GiB).
Result<Trace> read_trace_file(const std::string& path);
// The file bytes of `trace`: parse_trace(encode_trace(t)) == t, byte-exact round trips.
std::string encode_trace(const Trace& trace);

}  // namespace vramdoc::trace
