// Call sites of a snapshot's stacks: the frame that names each stack (the first user frame),
// cached per stack, and tallies of bytes by call site.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/snapshot/analysis.hpp"
#include "core/snapshot/model.hpp"

namespace vramdoc::snapshot::detail {

inline constexpr std::uint32_t kNoSite = ~0u;

class Sites {
 public:
  explicit Sites(const FrameTable& table) : table_(table) {}
  // The frame naming the stack: its first user frame, else its first .py frame, else its first
  // frame; kNoSite for an empty stack.
  std::uint32_t site_of_stack(std::uint32_t stack);
  std::string where(std::uint32_t site) const;
  std::vector<trace::PythonFrame> stack_text(std::uint32_t stack, std::size_t max_frames) const;

 private:
  bool user(std::uint32_t file_id);
  const FrameTable& table_;
  std::vector<std::uint32_t> site_of_;  // per stack: the site + 1 (0: not looked up yet)
  std::vector<std::int8_t> user_;       // per string id: -1 not looked up, 0 no, 1 yes
};

// Bytes and counts by call site, with the stack of each site's largest allocation.
class SiteTally {
 public:
  void add(std::uint32_t site, std::uint32_t stack, std::uint64_t bytes, double t_seconds = 0);
  bool empty() const { return by_site_.empty(); }
  // Largest first; at most `max` rows (the rest folded into an "other" row when any).
  std::vector<SiteRow> rows(const Sites& sites, std::size_t max) const;

 private:
  struct Acc {
    std::uint64_t bytes = 0, count = 0, largest = 0;
    std::uint32_t stack = 0;
    double first = 0, last = 0;
  };
  std::unordered_map<std::uint32_t, Acc> by_site_;
};

}  // namespace vramdoc::snapshot::detail
