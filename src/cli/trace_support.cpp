#include "cli/trace_support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "backends/private_files.hpp"
#include "cli/features.hpp"
#include "core/trace/elf_file.hpp"
#include "core/trace/overlay.hpp"
#include "core/trace/report.hpp"

extern char** environ;

namespace vramdoc::cli {
namespace {

namespace fs = std::filesystem;
using trace::SourceFrame;

constexpr std::size_t kAddressesPerCall = 256;

// Runs argv (found on PATH) and returns its standard output; empty when it cannot run.
std::string capture_output(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  if (spawned == 0) {
    char buffer[65536];
    ssize_t n;
    while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
    int status = 0;
    waitpid(pid, &status, 0);
  }
  close(pipe_fds[0]);
  return out;
}

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
    answers.merge(trace::parse_addr2line(capture_output(args)));
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
  for (const auto& [path, addresses] : trace::plan_symbolization(t, all_ips)) {
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
  for (const auto& [id, ips] : ips_of) p.stacks[id] = trace::resolve_frames(t, ips, answers);
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

Result<LoadedTraces> load_traces(const std::string& dir) {
  std::error_code ec;
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("trace.") && name.ends_with(".vdt")) files.insert(entry.path().string());
  }
  if (ec) return make_error("cannot read the trace directory " + dir + ": " + ec.message());
  LoadedTraces loaded;
  for (const auto& file : files) {
    auto t = trace::read_trace_file(file);
    if (t) loaded.processes.push_back(load_process(file, *t));
    else loaded.problems.push_back(t.error());
  }
  return loaded;
}

std::optional<timeline::TracedSeries> overlay_from_dir(const std::string& dir, const timeline::Timeline& tl,
                                                        std::optional<std::uint64_t> recording_start_unix_ns,
                                                        std::vector<std::string>& warnings) {
  auto loaded = load_traces(dir);
  if (!loaded) {
    warnings.push_back(loaded.error() + "; the report below is the driver's alone");
    return std::nullopt;
  }
  for (const auto& problem : loaded->problems) warnings.push_back("skipped " + problem);
  if (loaded->processes.empty()) {
    warnings.push_back("no readable trace.*.vdt in " + dir + "; the report below is the driver's alone");
    return std::nullopt;
  }
  return trace::build_overlay(loaded->processes, tl, recording_start_unix_ns);
}

std::string with_trace_json(const std::string& report_json, const std::optional<timeline::TracedSeries>& traced) {
  if (!traced) return report_json;
  auto out = nlohmann::json::parse(report_json);
  out["trace"] = trace::overlay_json(*traced);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<std::string> render_trace_report(const std::string& dir, bool json) {
  auto loaded = load_traces(dir);
  if (!loaded) return make_error(loaded.error());
  if (!loaded->problems.empty()) return make_error(loaded->problems.front());
  if (json) return trace::trace_report_json(loaded->processes).dump(2) + "\n";
  return trace::render_trace_text(loaded->processes);
}

}  // namespace vramdoc::cli
