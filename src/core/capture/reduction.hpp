// The global buffer of a CUDA reduction (ATen's Reduce.cuh): a sum or mean over a tensor's leading
// dimensions (a Linear layer's bias gradient: grad.sum(0)) that the kernel splits across thread blocks
// gathers their partial results in a buffer it allocates from the caching allocator after the output
// and frees before it returns (docs/estimator.md, "The replay").
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace vramdoc::capture {

// The card's figures the launch configuration depends on.
struct ReduceDevice {
  unsigned sm_count = 132;                   // multiProcessorCount (H200)
  unsigned max_threads_per_sm = 2048;        // maxThreadsPerMultiProcessor
};

// Bytes of the global buffer of reducing a contiguous tensor of `shape` (elements of `dtype`) over
// `dims` (negative counts from the end), as setReduceConfig / global_memory_size compute it: for a
// reduction over leading dimensions (outputs along the fastest dimension, vectorised by up to 4),
// accumulator bytes x outputs x the thread blocks per output x block width x vector width; 0 where the
// reduction needs no buffer or is of another form (over the fastest dimension: its buffer is small).
std::uint64_t reduction_buffer_bytes(std::string_view dtype, const std::vector<std::uint64_t>& shape,
                                     const std::vector<std::int64_t>& dims, const ReduceDevice& device);

}  // namespace vramdoc::capture
