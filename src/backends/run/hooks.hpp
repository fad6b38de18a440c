// What `vramdoc run` puts into the job's environment besides the job's own: the private folder
// of the run (the marker file the job may write "step N" lines to, the step hook) and
// --trace-python's hook in the trace folder. The hook is src/backends/run/sitecustomize.py,
// compiled in; every Python process of the job loads it through PYTHONPATH (docs/run-analyze.md).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::backends {

using Environment = std::vector<std::pair<std::string, std::string>>;

// The run's private folder ($TMPDIR/vramdoc-run-XXXXXX, mode 0700): `marks`, the marker file
// ($VRAMDOC_MARK_FILE), and the step hook when asked for. Removed with everything in it when
// this object goes.
class RunFolder {
 public:
  // Makes the folder and the empty marker file; the error says why it cannot.
  static Result<RunFolder> create();
  RunFolder(RunFolder&& other) noexcept;
  RunFolder& operator=(RunFolder&&) = delete;
  ~RunFolder();
  const std::string& mark_file() const { return mark_file_; }
  const std::string& folder() const { return folder_; }
  // Leaves the folder on disk (a job that goes on after vramdoc may still write its marks there).
  void release() { folder_.clear(); }
  // The step hook alone (run's default, without --trace-python): the hook written here and the
  // variables that load it with its step marks on: PYTHONPATH (the hook first) and VRAMDOC_STEP_HOOK=1.
  Result<Environment> step_hook() const;

 private:
  explicit RunFolder(std::string folder);
  std::string folder_, mark_file_;
};

// Writes DIR/python-hook-XXXXXX/sitecustomize.py (DIR created private, or refused when another
// user could write it) and returns the variables that make the job's Python load it: PYTHONPATH
// (the hook first, then the caller's) and VRAMDOC_PYTHON_TRACE_DIR.
Result<Environment> prepare_python_hook(const std::string& dir);

}  // namespace vramdoc::backends
