#include "core/trace/report.hpp"

#include <set>

#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"

namespace vramdoc::trace {
namespace {

constexpr const char* kPytorchNote =
    "  Note (PyTorch): the caching allocator asks the driver for large segments and hands tensors out of\n"
    "  them, so these call sites are segment allocations, not single tensors. For a tensor-level view run\n"
    "  the job again with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (slower; each tensor is then its own cudaMalloc).\n";

const std::vector<SourceFrame>& stack_of(const ProcessTrace& p, std::uint32_t id) {
  static const std::vector<SourceFrame> kEmpty;
  auto it = p.stacks.find(id);
  return it == p.stacks.end() ? kEmpty : it->second;
}

std::string call_site(const std::vector<SourceFrame>& frames) {
  return frames.empty() ? "(no stack)" : describe(frames[call_site_index(frames)]);
}

void render_groups(std::string& out, const ProcessTrace& p, const std::vector<AllocGroup>& groups,
                   const std::string& title, std::size_t max_groups, std::size_t max_frames) {
  out += "\n  " + title + "\n";
  if (groups.empty()) { out += "    none\n"; return; }
  TextTable table({"#", "bytes", "count", "kind", "call site"},
                  {TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right,
                   TextTable::Align::Left, TextTable::Align::Left});
  const std::size_t shown = std::min(groups.size(), max_groups);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& g = groups[i];
    table.add_row({std::to_string(i + 1), format_bytes(g.bytes), std::to_string(g.count), kind_name(g.kind),
                   call_site(stack_of(p, g.stack_id))});
  }
  out += table.render("    ");
  if (groups.size() > shown) out += "    ... and " + std::to_string(groups.size() - shown) + " more call sites\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& frames = stack_of(p, groups[i].stack_id);
    const std::size_t first = frames.empty() ? 0 : call_site_index(frames);
    out += "    #" + std::to_string(i + 1) + " stack:\n";
    for (std::size_t f = first; f < frames.size() && f < first + max_frames; ++f)
      out += "      " + describe(frames[f]) + "\n";
  }
}

nlohmann::json groups_json(const ProcessTrace& p, const std::vector<AllocGroup>& groups) {
  auto out = nlohmann::json::array();
  for (const auto& g : groups) {
    const auto& frames = stack_of(p, g.stack_id);
    auto stack = nlohmann::json::array();
    for (const auto& f : frames)
      stack.push_back({{"function", f.function}, {"file", f.file}, {"line", f.line}, {"module", f.module},
                       {"file_address", f.file_address}});
    out.push_back({{"bytes", g.bytes}, {"count", g.count}, {"kind", kind_name(g.kind)}, {"call_site", call_site(frames)},
                   {"first_t_s", g.first_t_s}, {"last_t_s", g.last_t_s},
                   {"call_site_frame", frames.empty() ? 0 : call_site_index(frames)}, {"stack", stack}});
  }
  return out;
}

}  // namespace

bool uses_pytorch(const Trace& trace) {
  for (const auto& r : trace.records)
    if (const auto* m = std::get_if<ModuleRecord>(&r); m && m->path.find("libc10_cuda") != std::string::npos) return true;
  return false;
}

const char* kind_name(MemKind kind) {
  switch (kind) {
    case MemKind::Device: return "device";
    case MemKind::Pitch: return "pitch";
    case MemKind::Managed: return "managed";
    case MemKind::Async: return "async";
    case MemKind::VmmPhysical: return "vmm";
    case MemKind::VmmMap: return "vmm-map";
    case MemKind::Pool: return "pool";
    case MemKind::Pinned: return "pinned";
  }
  return "?";
}

std::string call_site_name(const ProcessTrace& p, std::uint32_t stack_id) { return call_site(stack_of(p, stack_id)); }

std::vector<std::uint32_t> group_stacks(const TraceAnalysis& a) {
  std::set<std::uint32_t> ids;
  for (const auto* groups : {&a.leaks, &a.peak_contributors, &a.refused, &a.accumulating})
    for (const auto& g : *groups) ids.insert(g.stack_id);
  return {ids.begin(), ids.end()};
}

std::string render_trace_text(const std::vector<ProcessTrace>& processes, std::size_t max_groups,
                              std::size_t max_frames) {
  std::string out;
  if (processes.empty()) return "vramdoc trace: no trace files (the job made no CUDA allocation?)\n";
  for (const auto& p : processes) {
    const auto& a = p.analysis;
    out += "vramdoc trace: process " + std::to_string(p.pid) + " (" + terminal_safe(p.file) + ")\n";
    out += "  allocations " + std::to_string(a.allocations) + " = released " + std::to_string(a.releases) +
           " + still live " + std::to_string(a.live) + "; released but allocated before tracing " +
           std::to_string(a.unmatched_releases) + "; refused by the driver " + std::to_string(a.failed) + "\n";
    out += "  traced peak " + format_bytes(a.peak_bytes) + " at " + std::to_string(a.peak_t_s).substr(0, 6) +
           " s; alive at exit " + format_bytes(a.live_bytes) + "\n";
    if (p.truncated) out += "  (the trace ends mid-record: the process was killed; the last interval is missing)\n";
    for (const auto& w : p.warnings) out += "  (" + terminal_safe(w) + ")\n";
    if (!a.accumulating.empty())
      render_groups(out, p, a.accumulating, "Growing until the peak (kept by a loop: likely leaks), by call site:", max_groups,
                    max_frames);
    render_groups(out, p, a.leaks, "Alive at exit (leaks unless freed by teardown), by call site:", max_groups, max_frames);
    render_groups(out, p, a.peak_contributors, "Alive at the traced peak, by call site:", max_groups, max_frames);
    if (!a.refused.empty()) render_groups(out, p, a.refused, "Refused allocations (out of memory):", max_groups, max_frames);
    if (p.pytorch) out += "\n" + std::string(kPytorchNote);
    out += "\n";
  }
  return out;
}

nlohmann::json trace_report_json(const std::vector<ProcessTrace>& processes) {
  auto list = nlohmann::json::array();
  for (const auto& p : processes) {
    const auto& a = p.analysis;
    auto timeline = nlohmann::json::array();
    for (const auto& point : a.timeline) timeline.push_back({point.t_s, point.bytes});
    list.push_back({{"file", p.file}, {"pid", p.pid}, {"truncated", p.truncated}, {"pytorch", p.pytorch},
                    {"allocations", a.allocations}, {"releases", a.releases}, {"live", a.live},
                    {"unmatched_releases", a.unmatched_releases}, {"failed", a.failed},
                    {"live_bytes", a.live_bytes}, {"peak_bytes", a.peak_bytes}, {"peak_t_s", a.peak_t_s},
                    {"leaks", groups_json(p, a.leaks)}, {"peak_contributors", groups_json(p, a.peak_contributors)},
                    {"refused", groups_json(p, a.refused)}, {"accumulating", groups_json(p, a.accumulating)},
                    {"timeline", timeline}, {"warnings", p.warnings}});
  }
  return {{"processes", list}};
}

}  // namespace vramdoc::trace
