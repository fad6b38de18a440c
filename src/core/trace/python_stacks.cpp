#include "core/trace/python_stacks.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/redact.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"

namespace vramdoc::trace {
namespace {

using json = nlohmann::json;

// A non-negative integer no larger than `max`, or an error naming `what`.
Result<std::uint64_t> unsigned_field(const json& object, const char* key, const std::string& what,
                                     std::uint64_t max = std::numeric_limits<std::uint64_t>::max(),
                                     std::optional<std::uint64_t> fallback = std::nullopt) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return make_error(what + ": no \"" + key + "\"");
  }
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
    return make_error(what + ": \"" + key + "\" is not a non-negative integer");
  }
  const auto value = it->get<std::uint64_t>();
  if (value > max) return make_error(what + ": \"" + key + "\" is too large");
  return value;
}

Result<std::string> string_field(const json& object, const char* key, const std::string& what, bool required) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (required) return make_error(what + ": no \"" + key + "\"");
    return std::string();
  }
  if (!it->is_string()) return make_error(what + ": \"" + key + "\" is not a string");
  auto value = it->get<std::string>();
  if (value.size() > kMaxPythonText) return make_error(what + ": \"" + key + "\" is longer than 4096 bytes");
  return value;
}

Result<PythonFrame> parse_frame(const json& f, const std::string& what) {
  if (!f.is_object()) return make_error(what + " is not an object");
  PythonFrame frame;
  auto file = string_field(f, "file", what, true);
  if (!file) return make_error(file.error());
  auto function = string_field(f, "function", what, false);
  if (!function) return make_error(function.error());
  auto line = unsigned_field(f, "line", what, std::numeric_limits<std::uint32_t>::max(), 0);
  if (!line) return make_error(line.error());
  frame.file = std::move(*file), frame.function = std::move(*function), frame.line = static_cast<std::uint32_t>(*line);
  if (auto it = f.find("library"); it != f.end()) {
    if (!it->is_boolean()) return make_error(what + ": \"library\" is not true or false");
    frame.library = it->get<bool>();
  }
  return frame;
}

Result<PythonGroup> parse_group(const json& g, const std::string& what) {
  if (!g.is_object()) return make_error(what + " is not an object");
  PythonGroup group;
  auto device = unsigned_field(g, "device", what, std::numeric_limits<std::uint32_t>::max(), 0);
  if (!device) return make_error(device.error());
  auto bytes = unsigned_field(g, "bytes", what);
  if (!bytes) return make_error(bytes.error());
  auto count = unsigned_field(g, "count", what);
  if (!count) return make_error(count.error());
  group.device = static_cast<std::uint32_t>(*device), group.bytes = *bytes, group.count = *count;
  auto frames = g.find("frames");
  if (frames == g.end()) return group;
  if (!frames->is_array()) return make_error(what + ": \"frames\" is not a list");
  if (frames->size() > kMaxPythonFrames) return make_error(what + ": more than 256 frames");
  for (std::size_t i = 0; i < frames->size(); ++i) {
    auto frame = parse_frame((*frames)[i], what + ", frame " + std::to_string(i + 1));
    if (!frame) return make_error(frame.error());
    group.frames.push_back(std::move(*frame));
  }
  return group;
}

std::string file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Result<PythonStacks> parse_python_stacks(std::string_view text) {
  if (text.size() > kMaxPythonStacksFileBytes) return make_error("larger than 64 MiB");
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return make_error("not JSON");
  if (!doc.is_object()) return make_error("not a JSON object");
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get<std::string>() != "vramdoc-python-stacks") {
    return make_error("not a vramdoc Python stacks file (\"format\" is not \"vramdoc-python-stacks\")");
  }
  auto version = unsigned_field(doc, "version", "the file");
  if (!version) return make_error(version.error());
  if (*version != 1) return make_error("format version " + std::to_string(*version) + " (this vramdoc reads version 1)");
  PythonStacks out;
  auto pid = unsigned_field(doc, "pid", "the file", std::numeric_limits<std::int64_t>::max(), 0);
  if (!pid) return make_error(pid.error());
  out.pid = static_cast<std::int64_t>(*pid);
  auto error = string_field(doc, "error", "the file", false);
  if (!error) return make_error(error.error());
  out.error = redact_text(*error);  // an exception's text: it may quote anything
  if (!out.error.empty()) return out;  // the hook could not record: nothing else is there
  auto torch = string_field(doc, "torch", "the file", false);
  if (!torch) return make_error(torch.error());
  out.torch_version = std::move(*torch);
  auto allocated = unsigned_field(doc, "allocated_bytes", "the file", std::numeric_limits<std::uint64_t>::max(), 0);
  if (!allocated) return make_error(allocated.error());
  auto peak = unsigned_field(doc, "peak_allocated_bytes", "the file", std::numeric_limits<std::uint64_t>::max(), 0);
  if (!peak) return make_error(peak.error());
  out.allocated_bytes = *allocated, out.peak_allocated_bytes = *peak;
  auto left_out = unsigned_field(doc, "groups_left_out", "the file", std::numeric_limits<std::uint64_t>::max(), 0);
  if (!left_out) return make_error(left_out.error());
  out.groups_left_out = *left_out;
  auto when = string_field(doc, "when", "the file", false);
  if (!when) return make_error(when.error());
  if (*when == "oom") {
    auto oom = doc.find("oom");
    if (oom == doc.end() || !oom->is_object()) return make_error("the file: \"when\" is \"oom\" but \"oom\" is missing");
    PythonOom o;
    auto device = unsigned_field(*oom, "device", "\"oom\"", std::numeric_limits<std::uint32_t>::max(), 0);
    auto requested = unsigned_field(*oom, "requested_bytes", "\"oom\"");
    auto on_device = unsigned_field(*oom, "device_allocated_bytes", "\"oom\"", std::numeric_limits<std::uint64_t>::max(), 0);
    auto device_free = unsigned_field(*oom, "device_free_bytes", "\"oom\"", std::numeric_limits<std::uint64_t>::max(), 0);
    for (const auto* r : {&device, &requested, &on_device, &device_free}) {
      if (!*r) return make_error(r->error());
    }
    o.device = static_cast<std::uint32_t>(*device), o.requested_bytes = *requested;
    o.device_allocated_bytes = *on_device, o.device_free_bytes = *device_free;
    out.oom = o;
  } else if (!when->empty() && *when != "exit") {
    return make_error("the file: \"when\" is neither \"exit\" nor \"oom\"");
  }
  auto groups = doc.find("groups");
  if (groups == doc.end() || !groups->is_array()) return make_error("the file: \"groups\" is missing or not a list");
  if (groups->size() > kMaxPythonGroups) return make_error("the file: more than 10000 groups");
  for (std::size_t i = 0; i < groups->size(); ++i) {
    auto group = parse_group((*groups)[i], "group " + std::to_string(i + 1));
    if (!group) return make_error(group.error());
    out.groups.push_back(std::move(*group));
  }
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const PythonGroup& a, const PythonGroup& b) { return a.bytes > b.bytes; });
  return out;
}

void sort_python_stacks(std::vector<PythonStacks>& records) {
  std::stable_sort(records.begin(), records.end(), [](const PythonStacks& a, const PythonStacks& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.oom.has_value() && !b.oom.has_value();
  });
}

std::size_t python_call_site_index(const std::vector<PythonFrame>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (!frames[i].library) return i;
  }
  return 0;
}

std::string describe(const PythonFrame& frame) {
  std::string out = file_name(frame.file) + ":" + std::to_string(frame.line);
  if (!frame.function.empty()) out += " " + frame.function;
  return terminal_safe(out);  // the fields come from a file the job's processes wrote
}

std::string render_python_stacks_text(const std::vector<PythonStacks>& processes, const std::vector<std::string>& problems,
                                      std::size_t max_groups, std::size_t max_frames) {
  std::string out = "Python lines holding CUDA memory (PyTorch's caching allocator, --trace-python):\n";
  for (const auto& p : problems) out += "  " + terminal_safe_lines(p) + "\n";
  if (processes.empty()) {
    out += "  no Python process wrote its stacks (the job did not import torch and use CUDA, or its Python ignored\n"
           "  PYTHONPATH: -I or -S; or it was killed before it could exit)\n";
    return out;
  }
  for (const auto& p : processes) {
    out += "\n  process " + std::to_string(p.pid);
    if (!p.error.empty()) {
      out += ": the hook could not record: " + terminal_safe(p.error) + "\n";
      continue;
    }
    const char* moment = p.oom ? "at its first out-of-memory error" : "at exit";
    out += std::string(" ") + moment + " (torch " + terminal_safe(p.torch_version) + "): " + format_bytes(p.allocated_bytes) +
           " allocated, peak " + format_bytes(p.peak_allocated_bytes) + "\n";
    if (p.oom) {
      out += "    cuda:" + std::to_string(p.oom->device) + " was asked for " + format_bytes(p.oom->requested_bytes) +
             " with " + format_bytes(p.oom->device_free_bytes) + " free (" + format_bytes(p.oom->device_allocated_bytes) +
             " allocated on the device); held at that moment by:\n";
    }
    if (p.groups.empty()) {
      out += std::string("    no live tensors ") + moment + "\n";
      continue;
    }
    TextTable table({"#", "bytes", "count", "Python line (innermost outside libraries)"},
                    {TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left});
    const std::size_t shown = std::min(p.groups.size(), max_groups);
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& g = p.groups[i];
      std::string where = g.frames.empty() ? "(no Python frame: allocated outside Python code)"
                                           : describe(g.frames[python_call_site_index(g.frames)]);
      if (g.device != 0) where += " [cuda:" + std::to_string(g.device) + "]";
      table.add_row({std::to_string(i + 1), format_bytes(g.bytes), std::to_string(g.count), where});
    }
    out += table.render("    ");
    const std::uint64_t more = saturating_add(p.groups.size() - shown, p.groups_left_out);
    if (more) out += "    ... and " + std::to_string(more) + " more stacks\n";
    for (std::size_t i = 0; i < shown && i < 3; ++i) {
      const auto& frames = p.groups[i].frames;
      if (frames.empty()) continue;
      out += "    #" + std::to_string(i + 1) + " stack (innermost first):\n";
      for (std::size_t f = 0; f < frames.size() && f < max_frames; ++f)
        out += std::string("      ") + (frames[f].library ? "  " : "> ") + describe(frames[f]) + "\n";
    }
  }
  return out;
}

json python_stacks_json(const std::vector<PythonStacks>& processes) {
  json out = json::array();
  for (const auto& p : processes) {
    json groups = json::array();
    for (const auto& g : p.groups) {
      json frames = json::array();
      for (const auto& f : g.frames)
        frames.push_back({{"file", f.file}, {"line", f.line}, {"function", f.function}, {"library", f.library}});
      groups.push_back({{"device", g.device}, {"bytes", g.bytes}, {"count", g.count},
                        {"call_site", g.frames.empty() ? "" : describe(g.frames[python_call_site_index(g.frames)])},
                        {"call_site_frame", python_call_site_index(g.frames)}, {"frames", frames}});
    }
    json oom = nullptr;
    if (p.oom) {
      oom = {{"device", p.oom->device}, {"requested_bytes", p.oom->requested_bytes},
             {"device_allocated_bytes", p.oom->device_allocated_bytes}, {"device_free_bytes", p.oom->device_free_bytes}};
    }
    out.push_back({{"file", p.file}, {"pid", p.pid}, {"when", p.oom ? "oom" : "exit"}, {"oom", oom},
                   {"torch", p.torch_version}, {"error", p.error},
                   {"allocated_bytes", p.allocated_bytes}, {"peak_allocated_bytes", p.peak_allocated_bytes},
                   {"groups_left_out", p.groups_left_out}, {"groups", groups}});
  }
  return out;
}

}  // namespace vramdoc::trace
