// --max-batch / --max-seq for a captured job: the command re-run with its {batch} (or {seq})
// placeholder set to other values, doubling from the start, then bisecting. Only captured values
// are answers: the largest one whose estimate fits (as `vramdoc probe` recommends only values that ran).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/capture/report.hpp"

namespace vramdoc::capture {

// One capture at `value`; a trial that did not run to its end counts as not fitting.
using TrialFunction = std::function<Trial(std::uint64_t value)>;

// The largest value in [1, limit] whose trial fits, searching from `start`; every trial in `trials`.
std::optional<std::uint64_t> search_max(std::uint64_t start, std::uint64_t limit, const TrialFunction& run,
                                        std::vector<Trial>& trials);

// argv with every `placeholder` ("{batch}") replaced by `value`.
std::vector<std::string> substitute(const std::vector<std::string>& argv, std::string_view placeholder, std::uint64_t value);

// Whether any argument holds `placeholder`.
bool has_placeholder(const std::vector<std::string>& argv, std::string_view placeholder);

// The compute capability of a card by name ("H100 SXM" -> 9.0, "RTX 4090" -> 8.9); 9.0 when unknown.
struct ComputeCapability {
  int major = 9, minor = 0;
  bool known = false;
};
ComputeCapability compute_capability(std::string_view card_name);

}  // namespace vramdoc::capture
