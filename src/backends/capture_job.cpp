#include "backends/capture_job.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "backends/launcher.hpp"
#include "backends/private_files.hpp"
#include "core/capture/trace.hpp"
#include "core/input_file.hpp"

namespace vramdoc::backends {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kTailBytes = 4000;

std::string tail_of(const std::string& path) {
  auto text = read_input_file(path, std::uint64_t{1} << 30);
  if (!text) return "";
  const std::string& t = *text;
  return t.size() > kTailBytes ? t.substr(t.size() - kTailBytes) : t;
}

std::vector<std::pair<std::string, std::string>> environment(const CaptureJob& job, const std::string& dir,
                                                             const std::string& trace) {
  std::string python_path = dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) python_path += std::string(":") + old;
  return {{"PYTHONPATH", python_path},
          {"VRAMDOC_CAPTURE_OUT", trace},
          {"VRAMDOC_CAPTURE_STEPS", std::to_string(job.steps)},
          {"VRAMDOC_CAPTURE_GPU_NAME", job.gpu_name},
          {"VRAMDOC_CAPTURE_GPU_BYTES", std::to_string(job.gpu_bytes)},
          {"VRAMDOC_CAPTURE_GPU_CC", std::to_string(job.cc_major) + "." + std::to_string(job.cc_minor)},
          {"VRAMDOC_CAPTURE_GPU_SMS", std::to_string(job.sms)},
          {"CUDA_VISIBLE_DEVICES", ""},   // a GPU on this machine is never used
          {"PYTHONUNBUFFERED", "1"}};
}

}  // namespace

Result<CaptureOutcome> run_capture(const CaptureJob& job) {
  if (job.argv.empty()) return make_error("no command to capture: give it after --, e.g. -- python train.py");
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return make_error("no folder for temporary files ($TMPDIR): " + ec.message());
  auto dir = make_private_temp_directory(tmp.string(), "vramdoc-capture");
  if (!dir) return make_error(dir.error());
  const std::string hook = (fs::path(*dir) / "sitecustomize.py").string();
  const std::string trace = (fs::path(*dir) / "capture.trace").string();
  const std::string log = (fs::path(*dir) / "job.log").string();
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{*dir};
  if (auto w = write_new_private_file(hook, std::string(job.module_text)); !w) return make_error(w.error());
  LaunchOptions o;
  o.extra_env = environment(job, *dir, trace);
  o.own_group = true;
  if (!job.show_output) o.out = Stream::file(log), o.err = Stream::file(log);
  int error_number = 0;
  auto p = Process::start(job.argv, o, error_number);
  if (!p)
    return make_error("cannot start '" + job.argv.front() + "': " + std::strerror(error_number) +
                      (error_number == ENOENT ? " (is it on PATH? give the full path)" : ""));
  CaptureOutcome out;
  const auto deadline = std::chrono::steady_clock::now() + job.timeout;
  std::optional<int> status;
  while (!(status = p->poll())) {
    if (std::chrono::steady_clock::now() >= deadline) {
      out.timed_out = true;
      status = p->stop(std::chrono::seconds(5));  // SIGTERM: the capture closes its trace
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  out.exit_status = *status;
  if (!job.show_output) out.output_tail = tail_of(log);
  if (fs::exists(trace, ec)) {
    auto text = read_input_file(trace, capture::kMaxTraceBytes);
    if (!text) return make_error(text.error());
    out.trace_text = std::move(*text);
  }
  return out;
}

}  // namespace vramdoc::backends
