#include "core/trace/symbols.hpp"

#include "core/trace/elf_file.hpp"
#include "core/terminal_safe.hpp"

#include <charconv>
#include <iterator>
#include <set>

namespace vramdoc::trace {
namespace {

constexpr std::size_t kMaxDepth = 4096;  // a corrupt tree cannot loop: ids fall towards 0 anyway

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hex(std::uint64_t value) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, 16);
  (void)ec;
  return "0x" + std::string(buffer, end);
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// A runtime frame: the driver, CUPTI, the tracer, or the CUDA runtime (cudaMalloc, cudart::...).
bool is_runtime_frame(const SourceFrame& f) {
  for (const char* lib : {"libcuda.so", "libcupti.so", "libvramdoc-tracer.so", "libcudart.so"})
    if (starts_with(f.module, lib)) return true;
  const std::string_view fn = f.function;
  if (starts_with(fn, "cudart::") || starts_with(fn, "__cudart") || starts_with(fn, "libcudart")) return true;
  return fn.size() > 4 && starts_with(fn, "cuda") && fn[4] >= 'A' && fn[4] <= 'Z';
}

}  // namespace

StackTable::StackTable(const Trace& trace) {
  for (const auto& r : trace.records)
    if (const auto* f = std::get_if<FrameRecord>(&r)) nodes_[f->id] = *f;
}

std::vector<std::uint64_t> StackTable::ips(std::uint32_t stack_id) const {
  std::vector<std::uint64_t> out;
  while (stack_id != 0 && out.size() < kMaxDepth) {
    auto it = nodes_.find(stack_id);
    if (it == nodes_.end()) break;
    out.push_back(it->second.ip);
    stack_id = it->second.parent;
  }
  return out;
}

ModuleMap::ModuleMap(const Trace& trace) {
  for (const auto& r : trace.records) {
    const auto* m = std::get_if<ModuleRecord>(&r);
    if (!m || m->end <= m->start) continue;
    // A later module paints over what it covers: cut the ranges it overlaps, keep their outer parts.
    auto it = ranges_.lower_bound(m->start);
    if (it != ranges_.begin() && std::prev(it)->second.end > m->start) --it;
    std::vector<std::pair<std::uint64_t, Range>> kept;
    while (it != ranges_.end() && it->first < m->end) {
      if (it->first < m->start) kept.push_back({it->first, {m->start, it->second.module}});
      if (it->second.end > m->end) kept.push_back({m->end, {it->second.end, it->second.module}});
      it = ranges_.erase(it);
    }
    for (auto& [start, range] : kept) ranges_.emplace(start, range);
    modules_.push_back(*m);
    ranges_.emplace(m->start, Range{m->end, modules_.size() - 1});
  }
}

const ModuleRecord* ModuleMap::find(std::uint64_t ip) const {
  auto it = ranges_.upper_bound(ip);
  if (it == ranges_.begin()) return nullptr;
  --it;
  return ip < it->second.end ? &modules_[it->second.module] : nullptr;
}

std::map<std::string, std::string> module_build_ids(const Trace& trace) {
  std::map<std::string, std::string> out;
  for (const auto& r : trace.records)
    if (const auto* m = std::get_if<ModuleRecord>(&r)) out[m->path] = m->build_id;
  return out;
}

std::optional<std::string> module_file_mismatch(const std::string& recorded, const std::optional<std::string>& on_disk) {
  if (recorded.empty()) return std::nullopt;
  if (!on_disk) return "the file has no build-id, the traced one had " + hex_bytes(recorded);
  if (*on_disk != recorded) return "build-id " + hex_bytes(*on_disk) + ", the traced process ran " + hex_bytes(recorded);
  return std::nullopt;
}

std::map<std::string, std::vector<std::uint64_t>> plan_symbolization(const ModuleMap& modules,
                                                                     const std::vector<std::uint64_t>& ips) {
  std::map<std::string, std::set<std::uint64_t>> unique;
  for (auto ip : ips)
    if (const auto* m = modules.find(ip)) unique[m->path].insert(ip - 1 - m->load_bias);
  std::map<std::string, std::vector<std::uint64_t>> out;
  for (auto& [path, addresses] : unique) out[path].assign(addresses.begin(), addresses.end());
  return out;
}

namespace {

// A CUDA header's inline code (cuda_runtime.h's cudaMalloc(T**) template, its crt/ internals):
// never the call site a person looks for; the inlining caller's line is (issue 29).
bool cuda_header(std::string_view file) {
  const auto slash = file.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? file : file.substr(slash + 1);
  return name == "cuda_runtime.h" || name == "cuda_runtime_api.h" || name == "driver_functions.h" ||
         file.find("/crt/") != std::string_view::npos || file.find("/include/cuda/") != std::string_view::npos;
}

SourceFrame read_pair(std::string_view function, std::string_view location) {
  SourceFrame f;
  if (function != "??") f.function = std::string(function);
  const auto colon = location.rfind(':');
  if (colon != std::string_view::npos && !starts_with(location, "??")) {
    f.file = std::string(location.substr(0, colon));
    std::from_chars(location.data() + colon + 1, location.data() + location.size(), f.line);
  }
  return f;
}

}  // namespace

std::unordered_map<std::uint64_t, SourceFrame> parse_addr2line(std::string_view output) {
  std::vector<std::string_view> lines;
  while (!output.empty()) {
    const auto nl = output.find('\n');
    lines.push_back(output.substr(0, nl));
    output = nl == std::string_view::npos ? std::string_view{} : output.substr(nl + 1);
  }
  std::unordered_map<std::uint64_t, SourceFrame> out;
  for (std::size_t i = 0; i + 2 < lines.size();) {
    const auto address_line = lines[i];
    if (!starts_with(address_line, "0x")) { ++i; continue; }
    std::uint64_t address = 0;
    std::from_chars(address_line.data() + 2, address_line.data() + address_line.size(), address, 16);
    // With -i, the inlined frames follow innermost first, a function and a location each: the
    // first one outside CUDA's headers names the call site.
    std::optional<SourceFrame> chosen, innermost;
    for (i += 1; i + 1 < lines.size() && !starts_with(lines[i], "0x"); i += 2) {
      SourceFrame f = read_pair(lines[i], lines[i + 1]);
      if (!innermost) innermost = f;
      if (!chosen && !cuda_header(f.file)) chosen = f;
    }
    if (i + 1 == lines.size() && !starts_with(lines[i], "0x")) ++i;  // a dangling line
    SourceFrame f = chosen ? *chosen : innermost.value_or(SourceFrame{});
    f.file_address = address;
    out[address] = f;
  }
  return out;
}

std::vector<SourceFrame> resolve_frames(
    const ModuleMap& modules, const std::vector<std::uint64_t>& ips,
    const std::map<std::string, std::unordered_map<std::uint64_t, SourceFrame>>& answers) {
  std::vector<SourceFrame> out;
  for (auto ip : ips) {
    SourceFrame f;
    f.ip = ip;
    if (const auto* m = modules.find(ip)) {
      f.file_address = ip - 1 - m->load_bias;
      if (auto a = answers.find(m->path); a != answers.end())
        if (auto hit = a->second.find(f.file_address); hit != a->second.end()) f = hit->second;
      f.ip = ip;
      f.module = base_name(m->path);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::size_t call_site_index(const std::vector<SourceFrame>& frames) {
  // PyTorch: the Python binding of the op the script called (THPVariable_full), when the
  // allocation came from Python; else the first frame past the runtime and c10's allocator.
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (starts_with(frames[i].module, "libtorch_python.so")) return i;
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (!is_runtime_frame(frames[i]) && !starts_with(frames[i].module, "libc10")) return i;
  return 0;
}

std::string describe(const SourceFrame& f) {
  std::string out;
  if (!f.function.empty()) out = f.function;
  if (!f.file.empty()) out += (out.empty() ? "" : " ") + ("(" + base_name(f.file) + ":" + std::to_string(f.line) + ")");
  if (out.empty()) out = (f.module.empty() ? hex(f.ip) : f.module + "+" + hex(f.file_address));
  return terminal_safe(out);  // symbols and paths come from the traced program's files
}

}  // namespace vramdoc::trace
