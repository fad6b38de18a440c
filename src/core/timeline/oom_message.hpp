// Out-of-memory messages of PyTorch, TensorFlow, JAX/XLA and the CUDA runtime, and their numbers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vramdoc::timeline {

struct OomMessage {
  std::string framework;  // "pytorch", "tensorflow", "jax", "cuda"
  std::string text;       // the line it was found in (trimmed to 600 characters)
  std::optional<std::uint64_t> requested_bytes;             // "Tried to allocate 21.00 GiB"
  std::optional<std::uint64_t> capacity_bytes;              // "total capacity of 139.80 GiB"
  std::optional<std::uint64_t> free_bytes;                  // "of which 18.60 GiB is free"
  std::optional<std::uint64_t> in_use_bytes;                // "this process has 121.19 GiB memory in use" (not another "Process N has")
  std::optional<std::uint64_t> allowed_bytes;               // "12.00 GiB allowed": set_per_process_memory_fraction's limit
  std::optional<std::uint64_t> allocated_bytes;             // "112.68 GiB is allocated by PyTorch"
  std::optional<std::uint64_t> reserved_unallocated_bytes;  // "7.73 GiB is reserved by PyTorch but unallocated"
};

// Recognises an out-of-memory message in one line (or a whole message) of a job's output and
// reads the numbers it states; empty when the text is not an out-of-memory message.
std::optional<OomMessage> parse_oom_message(std::string_view text);

}  // namespace vramdoc::timeline
