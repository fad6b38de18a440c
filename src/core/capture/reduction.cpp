#include "core/capture/reduction.hpp"

#include <algorithm>
#include <limits>

#include "core/capture/kernel_call.hpp"

namespace vramdoc::capture {
namespace {

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return b == 0 ? 0 : a / b + (a % b != 0); }

std::uint64_t last_pow2(std::uint64_t n) {
  std::uint64_t p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

// The accumulator's bytes (at::acc_type on CUDA): float for 16- and 32-bit floats, double, int64.
unsigned accumulator_bytes(std::string_view dtype) {
  if (dtype == "float32" || dtype == "bfloat16" || dtype == "float16") return 4;
  if (dtype == "float64" || dtype == "int64" || dtype == "int32" || dtype == "int8" || dtype == "uint8" || dtype == "bool")
    return 8;
  return 0;
}

}  // namespace

std::uint64_t reduction_buffer_bytes(std::string_view dtype, const std::vector<std::uint64_t>& shape,
                                     const std::vector<std::int64_t>& dims, const ReduceDevice& device) {
  const unsigned acc = accumulator_bytes(dtype), elem = element_bytes(dtype);
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (acc == 0 || elem == 0 || dims.empty() || rank == 0) return 0;
  std::vector<bool> reduced(shape.size(), false);
  for (std::int64_t d : dims) {
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return 0;
    reduced[static_cast<std::size_t>(d)] = true;
  }
  // only a leading run of reduced dimensions (they coalesce into one), the outputs after them
  std::size_t lead = 0;
  while (lead < reduced.size() && reduced[lead]) ++lead;
  if (lead == 0 || std::find(reduced.begin() + static_cast<std::ptrdiff_t>(lead), reduced.end(), true) != reduced.end())
    return 0;
  std::uint64_t inputs = 1, outputs = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::uint64_t& n = i < lead ? inputs : outputs;
    if (shape[i] != 0 && n > std::numeric_limits<std::uint32_t>::max() / shape[i]) return 0;  // beyond a kernel's indexing
    n *= shape[i];
  }
  if (outputs < 2 || inputs < 2) return 0;
  // "vectorize along output": up to 4 outputs per thread, as many as divide the outputs
  std::uint64_t vec = 4;
  while (vec > 1 && outputs % vec != 0) vec /= 2;
  // set_block_dimension: 512 threads at most (max_reduce_threads), over the vector width
  const std::uint64_t max_threads = 512 / vec, dim0 = outputs / vec, dim1 = inputs;
  const std::uint64_t dim0_pow2 = dim0 < max_threads ? last_pow2(dim0) : max_threads;
  const std::uint64_t dim1_pow2 = dim1 < max_threads ? last_pow2(dim1) : max_threads;
  std::uint64_t width = std::min<std::uint64_t>(dim0_pow2, 32);
  const std::uint64_t height = std::min(dim1_pow2, max_threads / width);
  width = std::min(dim0_pow2, max_threads / height);
  // outputs across the block's width; the inputs across its height when each thread keeps 16 or more
  const std::uint64_t grid_x = div_up(dim0, width);
  constexpr std::uint64_t min_values = 16, max_values = 256;
  if (!(inputs >= height * min_values || inputs >= max_values)) return 0;
  const std::uint64_t per_thread = div_up(inputs, height);
  const std::uint64_t target_grid = std::uint64_t{device.sm_count} * (device.max_threads_per_sm / (width * height));
  if (per_thread < max_values || grid_x > target_grid) return 0;
  const std::uint64_t ctas = std::max(std::min(div_up(target_grid, grid_x), div_up(per_thread, min_values)),
                                      div_up(per_thread, max_values));
  if (ctas <= 1) return 0;
  return std::uint64_t{acc} * outputs * ctas * width * vec;
}

}  // namespace vramdoc::capture
