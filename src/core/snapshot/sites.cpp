#include "core/snapshot/sites.hpp"

#include <algorithm>

namespace vramdoc::snapshot {

bool is_user_file(std::string_view f) {
  if (f.empty() || f.front() == '<' || !f.ends_with(".py")) return false;
  for (std::string_view library : {"/site-packages/", "/dist-packages/", "/torch/", "/lib/python3.", "/lib/python2.",
                                   "/lib64/python3."})
    if (f.find(library) != std::string_view::npos) return false;
  return true;
}

namespace detail {

bool Sites::user(std::uint32_t file_id) {
  if (file_id >= user_.size()) user_.resize(file_id + 1, -1);
  if (user_[file_id] < 0) user_[file_id] = is_user_file(table_.string(file_id)) ? 1 : 0;
  return user_[file_id] == 1;
}

std::uint32_t Sites::site_of_stack(std::uint32_t stack) {
  if (stack >= site_of_.size()) site_of_.resize(stack + 1, 0);
  if (site_of_[stack] != 0) return site_of_[stack] - 1;
  const auto frames = table_.stack(stack);
  std::uint32_t site = kNoSite, python = kNoSite;
  for (std::uint32_t f : frames) {
    if (user(table_.frame(f).file)) {
      site = f;
      break;
    }
    if (python == kNoSite && table_.string(table_.frame(f).file).ends_with(".py")) python = f;
  }
  if (site == kNoSite) site = python != kNoSite ? python : frames.empty() ? kNoSite : frames.front();
  site_of_[stack] = site + 1;
  return site;
}

std::string Sites::where(std::uint32_t site) const {
  if (site == kNoSite) return "(no stack recorded)";
  const Frame& f = table_.frame(site);
  return trace::describe(trace::PythonFrame{std::string(table_.string(f.file)), static_cast<std::uint32_t>(std::max<std::int64_t>(0, f.line)),
                                            std::string(table_.string(f.name)), false});
}

std::vector<trace::PythonFrame> Sites::stack_text(std::uint32_t stack, std::size_t max_frames) const {
  // With stacks="all" a stack is C++ frames (the allocator, the op) then Python frames: the
  // Python ones are shown, when there are any.
  const auto frames = table_.stack(stack);
  const bool python = std::any_of(frames.begin(), frames.end(),
                                  [&](std::uint32_t id) { return table_.string(table_.frame(id).file).ends_with(".py"); });
  std::vector<trace::PythonFrame> out;
  for (std::uint32_t id : frames) {
    if (out.size() >= max_frames) break;
    const Frame& f = table_.frame(id);
    if (python && !table_.string(f.file).ends_with(".py")) continue;
    const std::string file(table_.string(f.file));
    out.push_back({file, static_cast<std::uint32_t>(std::max<std::int64_t>(0, f.line)), std::string(table_.string(f.name)),
                   !is_user_file(file)});
  }
  return out;
}

void SiteTally::add(std::uint32_t site, std::uint32_t stack, std::uint64_t bytes, double t_seconds) {
  Acc& a = by_site_[site];
  if (a.count == 0) a.first = a.last = t_seconds;
  a.bytes += bytes;
  ++a.count;
  a.first = std::min(a.first, t_seconds);
  a.last = std::max(a.last, t_seconds);
  if (bytes >= a.largest) a.largest = bytes, a.stack = stack;
}

std::vector<SiteRow> SiteTally::rows(const Sites& sites, std::size_t max) const {
  std::vector<std::pair<std::uint32_t, const Acc*>> order;
  for (const auto& [site, acc] : by_site_) order.emplace_back(site, &acc);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->bytes != b.second->bytes ? a.second->bytes > b.second->bytes : a.first < b.first;
  });
  std::vector<SiteRow> out;
  SiteRow other;
  other.where = "(other call sites)";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Acc& a = *order[i].second;
    if (i + 1 < max || order.size() <= max) {
      out.push_back(SiteRow{sites.where(order[i].first), a.bytes, a.count, sites.stack_text(a.stack, kStackFrames), a.first, a.last});
    } else {
      other.bytes += a.bytes;
      other.count += a.count;
    }
  }
  if (other.count > 0) out.push_back(std::move(other));
  return out;
}

}  // namespace detail
}  // namespace vramdoc::snapshot
