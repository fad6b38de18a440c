#include "backends/run/hooks.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "backends/private_files.hpp"
#include "vramdoc/python_hook_text.hpp"

namespace vramdoc::backends {

namespace fs = std::filesystem;

namespace {

// The hook as FOLDER/sitecustomize.py (a new 0600 file) and PYTHONPATH with FOLDER first.
Result<std::string> write_hook(const std::string& folder) {
  const std::string file = (fs::path(folder) / "sitecustomize.py").string();
  if (auto written = write_new_private_file(file, kPythonHookText); !written) return make_error(written.error());
  std::string python_path = folder;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) python_path += std::string(":") + old;
  return python_path;
}

}  // namespace

Result<RunFolder> RunFolder::create() {
  auto folder = make_private_temp_directory("vramdoc-run");
  if (!folder) return make_error(folder.error());
  RunFolder run(*folder);
  if (auto made = write_new_private_file(run.mark_file_, ""); !made) return make_error(made.error());
  return run;
}

RunFolder::RunFolder(std::string folder) : folder_(std::move(folder)), mark_file_((fs::path(folder_) / "marks").string()) {}

RunFolder::RunFolder(RunFolder&& other) noexcept : folder_(std::move(other.folder_)), mark_file_(std::move(other.mark_file_)) {
  other.folder_.clear();
}

RunFolder::~RunFolder() {
  std::error_code ignored;
  if (!folder_.empty()) fs::remove_all(folder_, ignored);
}

Result<Environment> RunFolder::step_hook() const {
  auto python_path = write_hook(folder_);
  if (!python_path) return make_error(python_path.error());
  return Environment{{"PYTHONPATH", *python_path}, {"VRAMDOC_STEP_HOOK", "1"}};
}

Result<Environment> prepare_python_hook(const std::string& dir) {
  std::error_code ec;
  const fs::path trace_dir = fs::absolute(fs::path(dir), ec);
  if (ec) return make_error("cannot resolve " + dir + ": " + ec.message());
  // The hook is code every Python process of the job runs: a fresh private folder in a folder
  // only this user can write, a new file (docs/security.md).
  auto parent = ensure_private_directory(trace_dir.string());
  if (!parent) return make_error(parent.error());
  auto hook_dir = make_private_temp_directory(*parent, "python-hook");
  if (!hook_dir) return make_error(hook_dir.error());
  auto python_path = write_hook(*hook_dir);
  if (!python_path) return make_error(python_path.error());
  return Environment{{"PYTHONPATH", *python_path}, {"VRAMDOC_PYTHON_TRACE_DIR", trace_dir.string()}};
}

}  // namespace vramdoc::backends
