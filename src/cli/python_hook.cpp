#include "cli/python_hook.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "backends/private_files.hpp"
#include "vramdoc/python_hook_text.hpp"

namespace vramdoc::cli {
namespace fs = std::filesystem;

Result<std::vector<std::pair<std::string, std::string>>> prepare_python_hook(const std::string& dir) {
  std::error_code ec;
  const fs::path trace_dir = fs::absolute(fs::path(dir), ec);
  if (ec) return make_error("cannot resolve " + dir + ": " + ec.message());
  // The hook is code every Python process of the job runs: a fresh private folder in a folder
  // only this user can write, a new file (docs/security.md).
  auto parent = backends::ensure_private_directory(trace_dir.string());
  if (!parent) return make_error(parent.error());
  auto hook_dir = backends::make_private_temp_directory(*parent, "python-hook");
  if (!hook_dir) return make_error(hook_dir.error());
  const std::string file = (fs::path(*hook_dir) / "sitecustomize.py").string();
  if (auto written = backends::write_new_private_file(file, kPythonHookText); !written) return make_error(written.error());
  std::string python_path = *hook_dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) python_path += std::string(":") + old;
  return std::vector<std::pair<std::string, std::string>>{{"PYTHONPATH", python_path},
                                                          {"VRAMDOC_PYTHON_TRACE_DIR", trace_dir.string()}};
}

Result<StepHook> prepare_step_hook() {
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return make_error("no folder for temporary files ($TMPDIR): " + ec.message());
  std::string folder = (tmp / "vramdoc-hook-XXXXXX").string();
  if (!mkdtemp(folder.data())) return make_error("cannot create a folder for the step hook in " + tmp.string());
  const fs::path file = fs::path(folder) / "sitecustomize.py";
  std::ofstream out(file, std::ios::trunc);
  out << kPythonHookText;
  if (!out.flush()) {
    std::error_code ignored;
    fs::remove_all(folder, ignored);
    return make_error("cannot write " + file.string());
  }
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, ec);  // the job's user alone
  std::string python_path = folder;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) python_path += std::string(":") + old;
  return StepHook{folder, {{"PYTHONPATH", python_path}, {"VRAMDOC_STEP_HOOK", "1"}}};
}

Result<trace::PythonStackSet> load_python_stacks(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return make_error("cannot read " + dir + ": " + ec.message());
  std::vector<fs::path> files;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("python.") && name.ends_with(".json") && entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  trace::PythonStackSet out;
  for (const auto& f : files) {
    const auto size = fs::file_size(f, ec);
    if (ec || size > trace::kMaxPythonStacksFileBytes) {
      out.problems.push_back(f.string() + ": " + (ec ? ec.message() : "larger than 64 MiB"));
      continue;
    }
    std::ifstream in(f, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    auto parsed = trace::parse_python_stacks(text.str());
    if (!parsed) {
      out.problems.push_back(f.string() + ": " + parsed.error());
      continue;
    }
    parsed->file = f.string();
    out.processes.push_back(std::move(*parsed));
  }
  trace::sort_python_stacks(out.processes);
  return out;
}

}  // namespace vramdoc::cli
