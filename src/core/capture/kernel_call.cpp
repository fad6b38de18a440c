#include "core/capture/kernel_call.hpp"

#include <charconv>

namespace vramdoc::capture {
namespace {

// Splits `text` at every `sep`.
std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

}  // namespace

unsigned element_bytes(std::string_view dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "bfloat16" || dtype == "float16") return 2;
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype.starts_with("float8") || dtype == "uint8" || dtype == "int8" || dtype == "bool") return 1;
  return 0;
}

std::vector<std::uint64_t> arg_numbers(std::string_view arg) {
  std::vector<std::uint64_t> out;
  for (const std::string_view part : split(arg, 'x')) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || p != part.data() + part.size()) return {};
    out.push_back(v);
  }
  return out;
}

std::optional<KernelCall> parse_kernel_call(std::string_view info) {
  const auto colon = info.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  KernelCall call;
  call.dtype = std::string(info.substr(0, colon));
  info.remove_prefix(colon + 1);
  const auto semi = info.find(';');
  if (semi != std::string_view::npos) {
    for (const std::string_view a : split(info.substr(semi + 1), ',')) call.args.emplace_back(a);
    info = info.substr(0, semi);
  }
  if (info == "-") return call;
  for (std::string_view s : split(info, ',')) {
    const bool cl = s.ends_with("@cl");
    if (cl) s.remove_suffix(3);
    auto dims = arg_numbers(s);
    if (dims.empty()) return std::nullopt;
    call.shapes.push_back(std::move(dims));
    call.channels_last.push_back(cl);
  }
  return call;
}

}  // namespace vramdoc::capture
