#include "core/timeline/oom_message.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/line_match.hpp"

namespace vramdoc::timeline {

namespace {

// "21.00 GiB", "625.12 MiB", "1.5GB", "4096 bytes" -> bytes; empty when absurd.
std::optional<std::uint64_t> to_bytes(const std::string& number, const std::string& unit) {
  double value = 0;
  try {
    value = std::stod(number);
  } catch (...) {
    return std::nullopt;
  }
  static const std::pair<const char*, double> kUnits[] = {
      {"B", 1.0},         {"bytes", 1.0},     {"KiB", 1024.0},   {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}, {"KB", 1e3},   {"MB", 1e6},       {"GB", 1e9},        {"TB", 1e12}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      double bytes = value * scale;
      if (!std::isfinite(bytes) || bytes < 0 || bytes > 1e18) return std::nullopt;
      return static_cast<std::uint64_t>(std::llround(bytes));
    }
  }
  return std::nullopt;
}

// The first "<number> <unit>" captured by `pattern` (groups 1 and 2) in `text`.
std::optional<std::uint64_t> find_size(const std::string& text, const LineMatcher& pattern) {
  const auto m = pattern.groups(text);
  if (!m || m->size() < 2 || !(*m)[0] || !(*m)[1]) return std::nullopt;
  return to_bytes(std::string(*(*m)[0]), std::string(*(*m)[1]));
}

const std::string kSize = R"(([0-9]+(?:\.[0-9]+)?)\s*(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB))";

}  // namespace

std::optional<OomMessage> parse_oom_message(std::string_view view) {
  const std::string text(view.substr(0, 4000));
  // RE2 (core/line_match.hpp): linear in the line's length, which std::regex was not.
  static const LineMatcher kPytorch = LineMatcher::fixed(R"(CUDA out of memory|OutOfMemoryError)");
  static const LineMatcher kTensorflow = LineMatcher::fixed(R"(ResourceExhaustedError|OOM when allocating tensor)");
  static const LineMatcher kJax = LineMatcher::fixed(R"(RESOURCE_EXHAUSTED:?\s*Out of memory)");
  static const LineMatcher kCuda = LineMatcher::fixed(
      R"((?i)cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|CUDA error: out of memory|\bout of memory\b)");
  OomMessage out;
  if (kPytorch.search(text)) {
    out.framework = "pytorch";
    static const LineMatcher kRequested = LineMatcher::fixed("Tried to allocate " + kSize);
    static const LineMatcher kCapacity = LineMatcher::fixed("total capacity of " + kSize);
    static const LineMatcher kFree = LineMatcher::fixed("of which " + kSize + " is free");
    // The message lists other processes first ("Process 547 has 9.76 GiB memory in use"): the
    // job's own figure is "this process has" (a job under 5 other jobs read their bytes as its own).
    static const LineMatcher kInUse = LineMatcher::fixed("this process has " + kSize + " memory in use");
    static const LineMatcher kAnyInUse = LineMatcher::fixed("has " + kSize + " memory in use");
    static const LineMatcher kAllowed = LineMatcher::fixed(kSize + " allowed");
    static const LineMatcher kAllocated = LineMatcher::fixed(kSize + " is allocated by PyTorch");
    static const LineMatcher kUnallocated = LineMatcher::fixed(kSize + " is reserved by PyTorch but unallocated");
    out.requested_bytes = find_size(text, kRequested);
    out.capacity_bytes = find_size(text, kCapacity);
    out.free_bytes = find_size(text, kFree);
    out.in_use_bytes = find_size(text, kInUse);
    if (!out.in_use_bytes) out.in_use_bytes = find_size(text, kAnyInUse);
    out.allowed_bytes = find_size(text, kAllowed);
    out.allocated_bytes = find_size(text, kAllocated);
    out.reserved_unallocated_bytes = find_size(text, kUnallocated);
  } else if (kTensorflow.search(text)) {
    out.framework = "tensorflow";
    // "OOM when allocating tensor with shape[8,1024,32000] and type float": size from the shape.
    static const LineMatcher kShape = LineMatcher::fixed(
        R"(shape\s*\[([0-9,\s]+)\]\s*and type (float|half|bfloat16|double|int32|int64))");
    if (const auto m = kShape.groups(text); m && (*m)[0] && (*m)[1]) {
      double elements = 1;
      std::string_view dims = *(*m)[0];
      while (!dims.empty()) {
        const std::size_t start = dims.find_first_of("0123456789");
        if (start == std::string_view::npos) break;
        const std::size_t end = std::min(dims.find_first_not_of("0123456789", start), dims.size());
        elements *= std::strtod(std::string(dims.substr(start, end - start)).c_str(), nullptr);  // never throws
        dims.remove_prefix(end);
      }
      const std::string_view type = *(*m)[1];
      double width = type == "double" || type == "int64" ? 8 : type == "half" || type == "bfloat16" ? 2 : 4;
      if (std::isfinite(elements) && elements * width < 1e18) out.requested_bytes = static_cast<std::uint64_t>(elements * width);
    }
  } else if (kJax.search(text)) {
    out.framework = "jax";
    static const LineMatcher kRequested = LineMatcher::fixed(R"(trying to allocate ([0-9]+(?:\.[0-9]+)?)\s*(bytes|B|KiB|MiB|GiB|TiB))");
    out.requested_bytes = find_size(text, kRequested);
  } else if (kCuda.search(text)) {
    out.framework = "cuda";
  } else {
    return std::nullopt;
  }
  out.text = text.substr(0, 600);
  return out;
}

}  // namespace vramdoc::timeline
