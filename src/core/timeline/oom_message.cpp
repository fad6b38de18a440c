#include "core/timeline/oom_message.hpp"

#include <cmath>
#include <regex>

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
std::optional<std::uint64_t> find_size(const std::string& text, const std::regex& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, pattern)) return std::nullopt;
  return to_bytes(m[1].str(), m[2].str());
}

const std::string kSize = R"(([0-9]+(?:\.[0-9]+)?)\s*(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB))";

}  // namespace

std::optional<OomMessage> parse_oom_message(std::string_view view) {
  const std::string text(view.substr(0, 4000));
  static const std::regex kPytorch(R"(CUDA out of memory|OutOfMemoryError)");
  static const std::regex kTensorflow(R"(ResourceExhaustedError|OOM when allocating tensor)");
  static const std::regex kJax(R"(RESOURCE_EXHAUSTED:?\s*Out of memory)");
  static const std::regex kCuda(R"(cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|CUDA error: out of memory|\bout of memory\b)",
                                std::regex::icase);
  OomMessage out;
  if (std::regex_search(text, kPytorch)) {
    out.framework = "pytorch";
    static const std::regex kRequested("Tried to allocate " + kSize);
    static const std::regex kCapacity("total capacity of " + kSize);
    static const std::regex kFree("of which " + kSize + " is free");
    static const std::regex kInUse("has " + kSize + " memory in use");
    static const std::regex kAllocated(kSize + " is allocated by PyTorch");
    static const std::regex kUnallocated(kSize + " is reserved by PyTorch but unallocated");
    out.requested_bytes = find_size(text, kRequested);
    out.capacity_bytes = find_size(text, kCapacity);
    out.free_bytes = find_size(text, kFree);
    out.in_use_bytes = find_size(text, kInUse);
    out.allocated_bytes = find_size(text, kAllocated);
    out.reserved_unallocated_bytes = find_size(text, kUnallocated);
  } else if (std::regex_search(text, kTensorflow)) {
    out.framework = "tensorflow";
    // "OOM when allocating tensor with shape[8,1024,32000] and type float": size from the shape.
    static const std::regex kShape(R"(shape\s*\[([0-9,\s]+)\]\s*and type (float|half|bfloat16|double|int32|int64))");
    std::smatch m;
    if (std::regex_search(text, m, kShape)) {
      double elements = 1;
      static const std::regex kDim("[0-9]+");
      std::string dims = m[1].str();
      for (std::sregex_iterator it(dims.begin(), dims.end(), kDim), end; it != end; ++it) elements *= std::stod(it->str());
      const std::string type = m[2].str();
      double width = type == "double" || type == "int64" ? 8 : type == "half" || type == "bfloat16" ? 2 : 4;
      if (elements * width < 1e18) out.requested_bytes = static_cast<std::uint64_t>(elements * width);
    }
  } else if (std::regex_search(text, kJax)) {
    out.framework = "jax";
    static const std::regex kRequested(R"(trying to allocate ([0-9]+(?:\.[0-9]+)?)\s*(bytes|B|KiB|MiB|GiB|TiB))");
    out.requested_bytes = find_size(text, kRequested);
  } else if (std::regex_search(text, kCuda)) {
    out.framework = "cuda";
  } else {
    return std::nullopt;
  }
  out.text = text.substr(0, 600);
  return out;
}

}  // namespace vramdoc::timeline
