#include "core/capture/search.hpp"

#include <algorithm>
#include <cctype>

namespace vramdoc::capture {

std::optional<std::uint64_t> search_max(std::uint64_t start, std::uint64_t limit, const TrialFunction& run,
                                        std::vector<Trial>& trials) {
  std::optional<std::uint64_t> fit;  // largest value that fit
  std::optional<std::uint64_t> miss;  // smallest value that did not
  auto attempt = [&](std::uint64_t v) {
    Trial t = run(v);
    t.batch = v;
    trials.push_back(t);
    const bool ok = t.ran_to_end && t.fits;
    if (ok && (!fit || v > *fit)) fit = v;
    if (!ok && (!miss || v < *miss)) miss = v;
    return ok;
  };
  std::uint64_t v = std::clamp<std::uint64_t>(start, 1, limit);
  if (attempt(v)) {
    while (v < limit && !miss) v = std::min(limit, v * 2), attempt(v);
  } else {
    while (v > 1 && !fit) v /= 2, attempt(v);
  }
  if (!fit) return std::nullopt;
  while (miss && *miss - *fit > 1) attempt(*fit + (*miss - *fit) / 2);
  return fit;
}

std::vector<std::string> substitute(const std::vector<std::string>& argv, std::string_view placeholder, std::uint64_t value) {
  std::vector<std::string> out = argv;
  const std::string text = std::to_string(value);
  for (auto& a : out)
    for (auto at = a.find(placeholder); at != std::string::npos; at = a.find(placeholder, at + text.size()))
      a.replace(at, placeholder.size(), text);
  return out;
}

bool has_placeholder(const std::vector<std::string>& argv, std::string_view placeholder) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.find(placeholder) != std::string::npos; });
}

ComputeCapability compute_capability(std::string_view card_name) {
  std::string n;
  for (char c : card_name) if (c != ' ' && c != '-') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Row { std::string_view pattern; int major, minor; };
  // sources: NVIDIA's CUDA GPU compute capability table (developer.nvidia.com/cuda-gpus)
  static constexpr Row rows[] = {
      {"gb200", 10, 0}, {"b200", 10, 0}, {"b100", 10, 0}, {"rtx50", 12, 0}, {"rtxpro6000", 12, 0},
      {"gh200", 9, 0}, {"h200", 9, 0}, {"h100", 9, 0}, {"h800", 9, 0}, {"h20", 9, 0},
      {"l40", 8, 9}, {"l4", 8, 9}, {"rtx40", 8, 9}, {"6000ada", 8, 9}, {"ada", 8, 9},
      {"a100", 8, 0}, {"a800", 8, 0}, {"a30", 8, 0}, {"a40", 8, 6}, {"a10", 8, 6}, {"a6000", 8, 6}, {"a5000", 8, 6},
      {"a4000", 8, 6}, {"rtx30", 8, 6}, {"t4", 7, 5}, {"rtx20", 7, 5}, {"titanrtx", 7, 5}, {"v100", 7, 0}, {"p100", 6, 0},
  };
  for (const auto& r : rows)
    if (n.find(r.pattern) != std::string::npos) return {r.major, r.minor, true};
  return {};
}

}  // namespace vramdoc::capture
