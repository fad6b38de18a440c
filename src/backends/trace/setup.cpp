#include "backends/trace/setup.hpp"

#include <filesystem>

#include "backends/private_files.hpp"

namespace vramdoc::backends {

namespace fs = std::filesystem;

Result<TraceSetup> prepare_trace(const std::string& dir, bool tracer_built, const std::string& tracer_dir) {
  if (!tracer_built)
    return make_error("this vramdoc was built without the allocation tracer: install the CUDA toolkit "
                      "with CUPTI (cupti.h, libcupti) and rebuild");
  std::error_code ec;
  fs::path where = tracer_dir.empty() ? fs::read_symlink("/proc/self/exe", ec).parent_path() : fs::path(tracer_dir);
  const fs::path tracer = fs::absolute(where / "libvramdoc-tracer.so", ec);
  if (!fs::is_regular_file(tracer, ec))
    return make_error("the tracer library is missing: " + tracer.string() + " (rebuild vramdoc with CUPTI)");
  if (auto made = ensure_private_directory(dir); !made) return make_error(made.error());
  TraceSetup setup{fs::absolute(dir).string(), tracer.string(), {}};
  setup.environment = {{"CUDA_INJECTION64_PATH", setup.tracer_path}, {"VRAMDOC_TRACE_DIR", setup.directory}};
  return setup;
}

}  // namespace vramdoc::backends
