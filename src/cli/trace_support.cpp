#include "cli/trace_support.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "backends/launcher.hpp"
#include "backends/private_files.hpp"
#include "cli/features.hpp"
#include "core/trace/elf_file.hpp"
#include "core/trace/report.hpp"

namespace vramdoc::cli {
namespace {

namespace fs = std::filesystem;
using trace::SourceFrame;

constexpr std::size_t kAddressesPerCall = 256;

// addr2line's answers for the file addresses of one module.
std::unordered_map<std::uint64_t, SourceFrame> symbolize_module(const std::string& path,
                                                                const std::vector<std::uint64_t>& addresses) {
  std::unordered_map<std::uint64_t, SourceFrame> answers;
  if (!fs::is_regular_file(path)) return answers;
  for (std::size_t i = 0; i < addresses.size(); i += kAddressesPerCall) {
    std::vector<std::string> args{"addr2line", "-a", "-f", "-C", "-e", path};
    for (std::size_t j = i; j < std::min(addresses.size(), i + kAddressesPerCall); ++j) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(addresses[j]));
      args.emplace_back(hex);
    }
    // addr2line missing or failing leaves the frames as module+offset.
    if (auto out = backends::capture_output(args)) answers.merge(trace::parse_addr2line(*out));
  }
  return answers;
}

trace::ProcessTrace load_process(const std::string& file, const trace::Trace& t) {
  trace::ProcessTrace p{file, t.pid, t.truncated, trace::uses_pytorch(t), trace::analyze_trace(t), {}, t.start_unix_ns, {}};
  const trace::StackTable stacks(t);
  std::vector<std::uint64_t> all_ips;
  std::map<std::uint32_t, std::vector<std::uint64_t>> ips_of;
  for (auto id : trace::group_stacks(p.analysis)) {
    ips_of[id] = stacks.ips(id);
    all_ips.insert(all_ips.end(), ips_of[id].begin(), ips_of[id].end());
  }
  std::map<std::string, std::unordered_map<std::uint64_t, SourceFrame>> answers;
  const auto ids = trace::module_build_ids(t);
  const trace::ModuleMap modules(t);
  for (const auto& [path, addresses] : trace::plan_symbolization(modules, all_ips)) {
    // A file rebuilt or replaced since the trace would name the wrong lines: its frames stay
    // module+offset. A file that is not here is simply not symbolised, as before.
    if (auto it = ids.find(path); it != ids.end() && !it->second.empty() && fs::is_regular_file(path)) {
      auto on_disk = trace::build_id_of_file(path);
      auto why = on_disk ? trace::module_file_mismatch(it->second, *on_disk) : std::optional<std::string>(on_disk.error());
      if (why) {
        p.warnings.push_back(path + " changed since the trace (" + *why + "): its frames are shown as module+offset");
        continue;
      }
    }
    answers[path] = symbolize_module(path, addresses);
  }
  for (const auto& [id, ips] : ips_of) p.stacks[id] = trace::resolve_frames(modules, ips, answers);
  return p;
}

}  // namespace

Result<TraceSetup> prepare_trace(const std::string& dir, const std::string& tracer_dir) {
  if (!have_cupti_tracer())
    return make_error("this vramdoc was built without the allocation tracer: install the CUDA toolkit "
                      "with CUPTI (cupti.h, libcupti) and rebuild");
  std::error_code ec;
  fs::path where = tracer_dir.empty() ? fs::read_symlink("/proc/self/exe", ec).parent_path() : fs::path(tracer_dir);
  const fs::path tracer = fs::absolute(where / "libvramdoc-tracer.so", ec);
  if (!fs::is_regular_file(tracer))
    return make_error("the tracer library is missing: " + tracer.string() + " (rebuild vramdoc with CUPTI)");
  if (auto made = backends::ensure_private_directory(dir); !made) return make_error(made.error());
  TraceSetup setup{fs::absolute(dir).string(), tracer.string(), {}};
  setup.environment = {{"CUDA_INJECTION64_PATH", setup.tracer_path}, {"VRAMDOC_TRACE_DIR", setup.directory}};
  return setup;
}

Result<trace::TraceSet> load_traces(const std::string& dir) {
  std::error_code ec;
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("trace.") && name.ends_with(".vdt")) files.insert(entry.path().string());
  }
  if (ec) return make_error("cannot read the trace directory " + dir + ": " + ec.message());
  trace::TraceSet loaded;
  for (const auto& file : files) {
    auto t = trace::read_trace_file(file);
    if (t) loaded.processes.push_back(load_process(file, *t));
    else loaded.problems.push_back(t.error());
  }
  return loaded;
}

}  // namespace vramdoc::cli
