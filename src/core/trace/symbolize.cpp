#include "core/trace/symbolize.hpp"

#include <filesystem>
#include <map>

#include "core/trace/analysis.hpp"
#include "core/trace/elf_file.hpp"

namespace vramdoc::trace {

ProcessTrace symbolized_process(const std::string& file, const Trace& t, const Symbolizer& symbolize) {
  ProcessTrace p{file, t.pid, t.truncated, uses_pytorch(t), analyze_trace(t), {}, t.start_unix_ns, {}};
  const StackTable stacks(t);
  std::vector<std::uint64_t> all_ips;
  std::map<std::uint32_t, std::vector<std::uint64_t>> ips_of;
  for (auto id : group_stacks(p.analysis)) {
    ips_of[id] = stacks.ips(id);
    all_ips.insert(all_ips.end(), ips_of[id].begin(), ips_of[id].end());
  }
  std::map<std::string, std::unordered_map<std::uint64_t, SourceFrame>> answers;
  const auto ids = module_build_ids(t);
  std::error_code ec;
  const ModuleMap modules(t);  // built once: every frame is looked up in it (issue 25: a 20 MB trace took 55 s)
  std::vector<std::string> unverifiable;  // a version 1 trace's module files found here: no build-id to check them by
  for (const auto& [path, addresses] : plan_symbolization(modules, all_ips)) {
    if (t.version < 2 && std::filesystem::is_regular_file(path, ec)) {
      unverifiable.push_back(path);
      continue;
    }
    if (auto it = ids.find(path); it != ids.end() && !it->second.empty() && std::filesystem::is_regular_file(path, ec)) {
      auto on_disk = build_id_of_file(path);
      auto why = on_disk ? module_file_mismatch(it->second, *on_disk) : std::optional<std::string>(on_disk.error());
      if (why) {
        p.warnings.push_back(path + " changed since the trace (" + *why + "): its frames are shown as module+offset");
        continue;
      }
    }
    answers[path] = symbolize(path, addresses);
  }
  if (!unverifiable.empty())
    p.warnings.push_back("a version " + std::to_string(t.version) + " trace records no build-ids, so this machine's " + unverifiable.front() +
                         (unverifiable.size() > 1 ? " (and " + std::to_string(unverifiable.size() - 1) + " other module files)" : std::string()) +
                         " may not be the file traced: its frames are shown as module+offset (re-record with this vramdoc to have them named)");
  for (const auto& [id, ips] : ips_of) p.stacks[id] = resolve_frames(modules, ips, answers);
  return p;
}

}  // namespace vramdoc::trace
