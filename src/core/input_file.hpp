// Reading a file a user named, bounded in size and refusing what is not a file: every command
// that reads an input (a config, a timeline, a trace, a Python stacks file) reads it through
// here, so /dev/zero, a FIFO nobody writes, a directory or a symlink loop is a clear error at
// once, never a hang or an unbounded allocation.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc {

// The name errors use for `path`: "standard input" for "-", else the path itself.
std::string input_name(const std::string& path);

// The whole of `path` ("-": standard input, read up to the same cap). Refuses anything but a
// regular file (saying what it is), a file larger than `max_bytes`, and unreadable paths (the
// error names the file and the system's reason, e.g. a symlink loop).
Result<std::string> read_input_file(const std::string& path, std::uint64_t max_bytes);

// `path` ("-": standard input) given to `piece` in pieces of at most 1 MiB as it is read, so a
// large input need not be held whole; the same refusals and cap as read_input_file (the cap
// checked as the bytes arrive). `piece` returns false to stop reading early.
Result<bool> read_input_pieces(const std::string& path, std::uint64_t max_bytes, const std::function<bool(std::string_view)>& piece);

// The first `bytes` bytes of the regular file `path` (fewer when it is shorter); the same refusals.
Result<std::string> read_file_head(const std::string& path, std::uint64_t bytes);

// Checks, without opening it, that `path` is a regular file of at most `max_bytes` (a file
// another library will open: a FIFO there would hang it). The same refusals as read_input_file.
Result<std::uint64_t> check_input_file(const std::string& path, std::uint64_t max_bytes);

}  // namespace vramdoc
