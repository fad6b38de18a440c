#include "backends/run/session.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>

#include "backends/run/hooks.hpp"
#include "backends/launcher.hpp"
#include "backends/run/job.hpp"
#include "backends/run/process_identity.hpp"
#include "backends/run/recorder.hpp"
#include "backends/run/timeline_file.hpp"
#include "backends/trace/setup.hpp"
#include "backends/watched_file.hpp"
#include "core/redact.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/preallocation.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/writer.hpp"

namespace vramdoc::backends {

namespace {

std::string default_out_name(const std::string& program) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return timeline::default_file_name(program, stamp);  // a long or odd program name is cut and tamed
}

// The trace folder: --trace-dir, else the timeline's name without .jsonl, plus .trace.
std::string default_trace_dir(const std::string& out) {
  return (out.size() > 6 && out.ends_with(".jsonl") ? out.substr(0, out.size() - 6) : out) + ".trace";
}

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// Every line written goes to the file and to the reader that builds the report's timeline (the
// recorder's thread writes samples, the main thread marks and messages).
class TimelineSink {
 public:
  TimelineSink(TimelineFile& file, std::string source) : file_(file), reader_(std::move(source)) {}
  void write(const std::string& lines) {
    std::lock_guard lock(mutex_);
    file_.write(lines);
    for (std::size_t pos = 0; pos < lines.size();) {
      const std::size_t nl = lines.find('\n', pos);
      const std::size_t end = nl == std::string::npos ? lines.size() : nl;
      reader_.add(std::string_view(lines).substr(pos, end - pos));
      pos = end + 1;
    }
  }
  Result<timeline::Timeline> finish() {
    std::lock_guard lock(mutex_);
    return reader_.finish();
  }

 private:
  std::mutex mutex_;
  TimelineFile& file_;
  timeline::LineReader reader_;
};

}  // namespace

struct RunSession::State {
  RunRequest request;
  std::unique_ptr<TimelineFile> out;
  std::string trace_dir;
  std::optional<RunFolder> folder;  // the marker file and the step hook; removed after the job
  Environment env;                  // tracing, the Python hooks
};

RunSession::RunSession(std::unique_ptr<State> state) : state_(std::move(state)) {}
RunSession::~RunSession() = default;

namespace {

// The environment of --trace, --trace-python and the step hook; the error names the option.
Result<bool> prepare_environment(const RunRequest& o, const std::string& trace_dir, std::optional<RunFolder>& folder,
                                 Environment& env) {
  if (o.trace || (!o.trace_dir.empty() && !o.trace_python)) {
    auto setup = prepare_trace(trace_dir, o.tracer_built);
    if (!setup) return make_error("--trace: " + setup.error());
    env.insert(env.end(), setup->environment.begin(), setup->environment.end());
  }
  auto made = RunFolder::create();  // without it the job still runs, with a line saying so
  if (made) folder.emplace(std::move(*made));
  else o.note("running without the marker file and the step hook: " + made.error());
  if (o.trace_python) {
    auto hook = prepare_python_hook(trace_dir);
    if (!hook) return make_error("--trace-python: " + hook.error());
    env.insert(env.end(), hook->begin(), hook->end());
    if (o.step_hook) env.emplace_back("VRAMDOC_STEP_HOOK", "1");
  } else if (o.step_hook && folder) {
    auto hook = folder->step_hook();  // on by default: without it the job still runs, with a line saying so
    if (!hook) o.note("running without the step hook: " + hook.error());
    else env.insert(env.end(), hook->begin(), hook->end());
  }
  return true;
}

// Passes the job's output through, turning --step-regex matches into marks and OOM lines into
// messages, until the job ends: its exit status; or until SIGTERM asks vramdoc to go: none (the
// job goes on, its output relayed).
std::optional<int> pump_job(Job& job, TimelineRecorder& recorder, const std::optional<timeline::StepRegex>& step_re,
                            SignalForwarder& forwarder) {
  forwarder.forward_to(job.pid());
  recorder.start(job.pid());
  long steps = 0;
  const bool detached = job.pump_output([&](const std::string& line) {
    if (step_re)
      if (auto label = step_re->step_label(line, steps)) recorder.mark(*label);
    if (timeline::parse_oom_message(line)) recorder.oom_message(redact_text(line));
  });
  std::optional<int> status;
  if (!detached) status = job.wait();
  recorder.stop();
  return status;
}

}  // namespace

Result<std::unique_ptr<RunSession>> RunSession::prepare(RunRequest request) {
  auto s = std::make_unique<State>();
  s->request = std::move(request);
  RunRequest& o = s->request;
  if (!o.note) o.note = [](const std::string&) {};
  const bool default_out = o.out.empty();
  if (default_out) o.out = default_out_name(o.command.at(0));
  auto opened = TimelineFile::open(o.out, default_out, o.note);  // a default name: new, private (docs/security.md)
  if (!opened) return make_error(opened.error());
  s->out = std::move(*opened);
  s->trace_dir = o.trace_dir.empty() ? default_trace_dir(o.out) : o.trace_dir;
  if (auto prepared = prepare_environment(o, s->trace_dir, s->folder, s->env); !prepared) {
    s->out->discard();
    return make_error(prepared.error());
  }
  return std::unique_ptr<RunSession>(new RunSession(std::move(s)));
}

std::variant<RunRecord, NotStarted> RunSession::record() {
  State& s = *state_;
  const RunRequest& o = s.request;
  RunRecord r;
  auto probe = open_nvml_job_probe();
  if (!probe) o.note("GPU memory sampling unavailable (" + probe.error() + "); running the job without it");
  JobMemoryProbe* gpu = probe ? probe->get() : nullptr;
  timeline::Header header;
  header.command = redact_argv(o.command);  // the timeline is shared: no secrets (docs/security.md)
  header.name = executable_name(header.command[0]);
  header.interval_seconds = o.interval_seconds;
  header.host = host_name();
  if (gpu) {
    header.device = gpu->device_name();
    header.gpus = gpu->gpu_infos();
    if (header.gpus.size() == 1) header.total_bytes = gpu->capacity_bytes({});  // several: each GPU's, in `gpus`
  }
  for (const auto& name : timeline::allocator_settings())  // what the job inherits that changes what the driver sees
    if (const char* value = std::getenv(name.c_str())) header.environment[name] = value;
  TimelineSink sink(*s.out, o.out);
  r.start_unix_ns = unix_now_ns();  // aligns the traced bytes (docs/trace.md) and several files exactly
  header.start_unix_seconds = static_cast<double>(r.start_unix_ns) / 1e9;
  sink.write(timeline::header_line(header));
  const std::string mark_file = s.folder ? s.folder->mark_file() : "";
  // Read through the descriptor opened now, before the job starts: the job replacing the path (a
  // link to /dev/zero, a FIFO) changes nothing the recorder reads (docs/security.md).
  std::unique_ptr<WatchedFile> marks;
  if (!mark_file.empty())
    if (auto opened = WatchedFile::open(mark_file)) marks = std::move(*opened);
  TimelineRecorder recorder(gpu, o.interval_seconds, marks.get(), header.host, [&sink](const std::string& l) { sink.write(l); },
                            header.heartbeat_seconds);

  // The timeline's path lets the job's own tools (the Python integrations) diagnose it at an OOM.
  Environment env = {{"VRAMDOC_MARK_FILE", mark_file}, {"VRAMDOC_TIMELINE", std::filesystem::absolute(o.out).string()}};
  if (!std::getenv("PYTHONUNBUFFERED")) env.emplace_back("PYTHONUNBUFFERED", "1");  // line by line through our pipe
  env.insert(env.end(), s.env.begin(), s.env.end());
  int error_number = 0;
  SignalForwarder forwarder(o.forward_sigterm);  // before the job starts: no signal falls in between
  auto job = Job::start(o.command, env, error_number);
  if (!job) {
    s.folder.reset();
    s.out->discard();
    return NotStarted{"cannot run '" + o.command[0] + "': " + start_failure(o.command[0], error_number), error_number};
  }
  const auto status = pump_job(*job, recorder, o.step_regex, forwarder);
  if (!status) {  // SIGTERM: the job goes on, and may still write marks into the folder
    r.detached_job_pid = static_cast<long>(job->pid());
    r.status = 128 + SIGTERM;
    o.note("SIGTERM: recording stopped, the job (pid " + std::to_string(*r.detached_job_pid) + ") goes on" +
           (s.folder ? "; its marker folder " + s.folder->folder() + " is left for it" : ""));
    if (s.folder) s.folder->release();
  } else {
    r.status = *status;
  }
  job.reset();
  s.folder.reset();

  const auto outcome = !status                  ? timeline::Outcome::Detached
                       : recorder.oom_messages() ? timeline::Outcome::Oom
                       : r.status == 0         ? timeline::Outcome::Ok
                                               : timeline::Outcome::Failed;
  sink.write(timeline::end_line(recorder.now(), outcome, status, gpu ? gpu->capacity_bytes(recorder.gpus()) : std::nullopt));
  s.out->close();
  auto written = sink.finish();
  if (written) {
    r.timeline = std::move(*written);
  } else {  // not expected: the lines are our own; what run knows without them
    o.note("cannot read the timeline back for a diagnosis: " + written.error());
    r.timeline.name = o.out;
    r.timeline.exit_status = r.status;
    r.timeline.outcome = outcome;
  }
  r.sampled = gpu != nullptr;
  if (!probe) r.unsampled_why = probe.error();
  r.timeline_file = o.out;
  if (s.out->failed()) r.timeline_lost = s.out->error();
  r.traces = o.trace || (!o.trace_dir.empty() && !o.trace_python);
  r.python = o.trace_python;
  if (r.traces || r.python) r.trace_dir = s.trace_dir;
  return r;
}

}  // namespace vramdoc::backends
