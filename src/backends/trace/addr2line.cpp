#include "backends/trace/addr2line.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "backends/launcher.hpp"

namespace vramdoc::backends {

namespace {

constexpr std::size_t kAddressesPerCall = 256;  // one addr2line per this many addresses: short command lines

}  // namespace

std::unordered_map<std::uint64_t, trace::SourceFrame> addr2line_symbolize(const std::string& path,
                                                                          const std::vector<std::uint64_t>& addresses) {
  std::unordered_map<std::uint64_t, trace::SourceFrame> answers;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return answers;
  for (std::size_t i = 0; i < addresses.size(); i += kAddressesPerCall) {
    std::vector<std::string> args{"addr2line", "-a", "-f", "-C", "-i", "-e", path};
    for (std::size_t j = i; j < std::min(addresses.size(), i + kAddressesPerCall); ++j) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(addresses[j]));
      args.emplace_back(hex);
    }
    if (auto out = capture_output(args)) answers.merge(trace::parse_addr2line(*out));
  }
  return answers;
}

}  // namespace vramdoc::backends
