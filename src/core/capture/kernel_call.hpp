// A capture trace's `k OP STREAM THREAD INFO` line, INFO read: `DTYPE:SHAPES[;ARGS]` with SHAPES the
// op's tensors in schema order (`64x3x224x224,64x3x7x7`; a channels-last one ends in `@cl`) and ARGS
// its other arguments where the capture writes them (convolutions, attention: lists as `AxB`,
// booleans as 1 / 0, None as `-`); python/vramdoc/_capture.py writes it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramdoc::capture {

struct KernelCall {
  std::string dtype;                                // float32, bfloat16, ...
  std::vector<std::vector<std::uint64_t>> shapes;  // one per tensor argument
  std::vector<bool> channels_last;                 // per shape
  std::vector<std::string> args;                   // the other arguments, as written
};

// Bytes per element of a dtype name (0 for a name it does not know).
unsigned element_bytes(std::string_view dtype);

// INFO read; nullopt where it is not of that form (a trace of the first capture format: no ARGS).
std::optional<KernelCall> parse_kernel_call(std::string_view info);

// An ARGS entry as integers: "2x2" -> {2, 2}, "1" -> {1}; empty for "-" or anything else.
std::vector<std::uint64_t> arg_numbers(std::string_view arg);

}  // namespace vramdoc::capture
