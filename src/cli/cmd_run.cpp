// vramdoc run [OPTIONS] -- COMMAND ARGS...: run a job, record its GPU memory, diagnose it. Three
// phases: prepare (options checked, the timeline file and tracing set up), record (the job under
// the recorder), report (the job report filled, printed and written).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <unistd.h>

#include "backends/process_identity.hpp"
#include "backends/process_job.hpp"
#include "backends/process_sampler.hpp"
#include "backends/watched_file.hpp"
#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/style.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/line_match.hpp"
#include "core/redact.hpp"
#include "core/report/job_report.hpp"
#include "core/terminal_safe.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/preallocation.hpp"
#include "core/timeline/writer.hpp"
#include "core/trace/overlay.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct RunOptions {
  std::string interval = "20ms", out, html, step_regex, trace_dir;
  EstimatorArgs job;
  bool trace = false, trace_python = false, json = false, no_report = false, no_step_hook = false;
  std::vector<std::string> command;
};

std::string default_out_name(const std::string& program) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return timeline::default_file_name(program, stamp);  // a long or odd program name is cut and tamed
}

// The step number in a --step-regex match: its first group when numeric, else a count.
std::string step_label(const std::vector<std::optional<std::string_view>>& groups, long& counter) {
  ++counter;
  if (!groups.empty() && groups[0]) {
    const std::string_view g = *groups[0];
    if (!g.empty() && g.find_first_not_of("0123456789") == std::string_view::npos && g.size() < 12) return "step " + std::string(g);
  }
  return "step " + std::to_string(counter - 1);
}


// What prepare() checked and set up before the job starts.
struct Prepared {
  std::optional<JobInput> input;   // --config / --model: quantifies the remedies
  double interval_seconds = 0;
  std::optional<LineMatcher> step_re;  // --step-regex
  std::unique_ptr<TimelineFile> out;  // the timeline file (a failed write is said at once)
  std::string trace_dir;           // --trace-dir, else the timeline's name + .trace
  std::optional<TraceSetup> trace;  // --trace
  std::vector<std::pair<std::string, std::string>> env;  // for the job: tracing, the Python hook
  std::string hook_folder;         // the step hook's own folder (without --trace-python), removed after the job
};

// What record() saw.
struct Recorded {
  timeline::Timeline timeline;
  int status = 0;                    // the job's, as a shell reports it
  bool sampled = false;              // GPU memory sampling was available
  std::string unsampled_why;         // why not, when it was not
  std::uint64_t start_unix_ns = 0;   // the wall clock at the timeline's t = 0
};

// The trace folder: --trace-dir, else the timeline's name without .jsonl, plus .trace.
std::string default_trace_dir(const std::string& out) {
  return (out.size() > 6 && out.ends_with(".jsonl") ? out.substr(0, out.size() - 6) : out) + ".trace";
}

// The marker file the job may write "step N" lines to, kept open (docs/security.md); null when
// none could be made.
std::unique_ptr<backends::WatchedFile> make_mark_file() {
  std::error_code ec;  // no folder for temporary files: the job runs without a marker file
  const auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) return nullptr;
  auto made = backends::WatchedFile::create_temp((tmp / "vramdoc-marks-XXXXXX").string());
  return made ? std::move(*made) : nullptr;
}

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--interval", o.interval, "sampling interval (default 20ms)");
  app.add_option("--out", o.out, "the timeline file, written while the job runs (default vramdoc-COMMAND-TIME.jsonl)");
  app.add_option("--html", o.html, "write the HTML report here when the job ends");
  app.add_option("--step-regex", o.step_regex, "a line of the job's output matching this ends a step (group 1: its number)");
  app.add_flag("--no-step-hook", o.no_step_hook,
               "do not inject the step hook into the job's Python (by default each PyTorch process marks every "
               "optimizer step with torch's allocated and reserved bytes; docs/run-analyze.md)");
  app.add_flag("--trace", o.trace, "record every device allocation with its call stack (CUPTI tracer, docs/trace.md)");
  app.add_flag("--trace-python", o.trace_python,
               "name the Python lines holding PyTorch's memory at exit and at the first OOM error (docs/trace.md)");
  auto* json = app.add_flag("--json", o.json, "print the report as one JSON object on stdout, after the job's own output, instead of the text on stderr");
  app.add_flag("--no-report", o.no_report, "print no report when the job ends (the timeline keeps it all: vramdoc analyze FILE)")
      ->excludes(json);
  app.add_option("--trace-dir", o.trace_dir, "where the traced processes write their traces (default: the timeline's name + .trace)");
  add_estimator_options(app, o.job, EstimatorUse::Job);
}

// Parses run's options (before "--") and the command (after it). -1 to go on, else the exit code.
int parse_run(const std::vector<std::string>& args, RunOptions& o) {
  auto dash = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> own(args.begin(), dash);
  if (dash != args.end()) o.command.assign(dash + 1, args.end());
  CLI::App app{"Run a job, record its GPU memory timeline (NVML, the job's whole process tree, per process and GPU), and\n"
               "diagnose it: leak, insufficient, fragmentation, plateau or stable, per process and for the job.\n"
               "The exit status is the job's.\n"
               "The job may write \"step N\" lines to the file named by $VRAMDOC_MARK_FILE to mark steps.", "run"};
  add_run_options(app, o);
  if (int rc = parse_args(app, own); rc >= 0) return rc;
  if (o.command.empty()) return fail("run", "no command: vramdoc run [OPTIONS] -- COMMAND ARGS...");
  return -1;
}

// The environment of --trace, --trace-python and the step hook; the error names the option.
Result<bool> prepare_tracing(const RunOptions& o, Prepared& p) {
  p.trace_dir = o.trace_dir.empty() ? default_trace_dir(o.out) : o.trace_dir;
  if (o.trace || (!o.trace_dir.empty() && !o.trace_python)) {
    auto setup = prepare_trace(p.trace_dir);
    if (!setup) return make_error("--trace: " + setup.error());
    p.trace = std::move(*setup);
    p.env.insert(p.env.end(), p.trace->environment.begin(), p.trace->environment.end());
  }
  if (o.trace_python) {
    auto hook = prepare_python_hook(p.trace_dir);
    if (!hook) return make_error("--trace-python: " + hook.error());
    p.env.insert(p.env.end(), hook->begin(), hook->end());
    if (!o.no_step_hook) p.env.emplace_back("VRAMDOC_STEP_HOOK", "1");
  } else if (!o.no_step_hook) {
    auto hook = prepare_step_hook();  // on by default: without it the job still runs, with a line saying so
    if (!hook) std::fprintf(stderr, "vramdoc run: running without the step hook: %s\n", hook.error().c_str());
    if (hook) p.hook_folder = hook->folder, p.env.insert(p.env.end(), hook->environment.begin(), hook->environment.end());
  }
  return true;
}

// The timeline file read back, as `analyze` reads it: one story for run and analyze. When it was
// not written (said already) or cannot be read (not a regular file, said here), what run knows without it.
timeline::Timeline read_back(const std::string& path, bool written, int status, timeline::Outcome outcome) {
  if (written) {
    auto back = load_timeline(path);
    if (back) return *back;
    std::fprintf(stderr, "vramdoc run: cannot read the timeline back for a diagnosis: %s\n", terminal_safe_lines(back.error()).c_str());
  }
  timeline::Timeline tl;
  tl.name = path;
  tl.exit_status = status;
  tl.outcome = outcome;
  return tl;
}

// Checks the options, opens the timeline file and sets up tracing; an error leaves no file behind.
Result<Prepared> prepare(RunOptions& o) {
  Prepared p;
  auto input = read_job(o.job);
  if (!input) return make_error(input.error());
  p.input = std::move(*input);
  auto interval = parse_duration(o.interval);
  if (!interval) return make_error(interval.error());
  if (*interval < 0.001 || *interval > 60) return make_error("--interval must be between 1ms and 60s");
  p.interval_seconds = *interval;
  if (!o.step_regex.empty()) {
    auto matcher = LineMatcher::compile(o.step_regex, "--step-regex");
    if (!matcher) return make_error(matcher.error());
    p.step_re = std::move(*matcher);
  }
  const bool default_out = o.out.empty();
  if (default_out) o.out = default_out_name(o.command[0]);
  auto opened = TimelineFile::open(o.out, default_out);  // a default name: new, private (docs/security.md)
  if (!opened) return make_error(opened.error());
  p.out = std::move(*opened);
  if (auto traced = prepare_tracing(o, p); !traced) {
    p.out->discard();
    return make_error(traced.error());
  }
  return p;
}

// Passes the job's output through, turning --step-regex matches into marks and OOM lines into
// messages, until the job ends; its exit status.
int pump_job(backends::Job& job, backends::JobRecorder& recorder, const std::optional<LineMatcher>& step_re) {
  backends::SignalForwarder forward(job.pid());
  recorder.start(job.pid());
  long steps = 0;
  job.pump_output([&](const std::string& line) {
    if (step_re)
      if (auto groups = step_re->groups(line)) recorder.mark(step_label(*groups, steps));
    if (timeline::parse_oom_message(line)) recorder.oom_message(redact_text(line));
  });
  const int status = job.wait();
  recorder.stop();
  return status;
}

// Runs the job under the recorder: the timeline file gets the header, every sample, mark and
// message as it comes, and the end line. -1 when the job ran, else the exit code (it could not start).
int record(const RunOptions& o, Prepared& p, Recorded& r) {
  const auto mark_file = make_mark_file();
  auto probe = backends::open_nvml_job_probe();
  if (!probe) std::fprintf(stderr, "vramdoc run: GPU memory sampling unavailable (%s); running the job without it\n", probe.error().c_str());
  backends::JobMemoryProbe* gpu = probe ? probe->get() : nullptr;
  timeline::Header header;
  header.command = redact_argv(o.command);  // the timeline is shared: no secrets (docs/security.md)
  header.name = executable_name(header.command[0]);
  header.interval_seconds = p.interval_seconds;
  header.host = backends::host_name();
  if (gpu) {
    header.device = gpu->device_name();
    header.gpus = gpu->gpu_infos();
    if (header.gpus.size() == 1) header.total_bytes = gpu->capacity_bytes({});  // several: each GPU's, in `gpus`
  }
  for (const auto& name : timeline::allocator_settings())  // what the job inherits that changes what the driver sees
    if (const char* value = std::getenv(name.c_str())) header.environment[name] = value;
  auto sink = [out = p.out.get()](const std::string& line) { out->write(line); };
  r.start_unix_ns = unix_now_ns();  // aligns the traced bytes (docs/trace.md) and several files exactly
  header.start_unix_seconds = static_cast<double>(r.start_unix_ns) / 1e9;
  sink(timeline::header_line(header));
  backends::JobRecorder recorder(gpu, p.interval_seconds, mark_file.get(), header.host, sink, header.heartbeat_seconds);

  // The timeline's path lets the job's own tools (the Python integrations) diagnose it at an OOM.
  std::vector<std::pair<std::string, std::string>> env = {{"VRAMDOC_MARK_FILE", mark_file ? mark_file->path() : ""},
                                                          {"VRAMDOC_TIMELINE", std::filesystem::absolute(o.out).string()}};
  if (!getenv("PYTHONUNBUFFERED")) env.emplace_back("PYTHONUNBUFFERED", "1");  // line by line through our pipe
  env.insert(env.end(), p.env.begin(), p.env.end());
  int error_number = 0;
  auto job = backends::Job::start(o.command, env, error_number);
  std::error_code ignored;
  if (!job) {
    if (mark_file) mark_file->remove_path();
    if (!p.hook_folder.empty()) std::filesystem::remove_all(p.hook_folder, ignored);
    p.out->discard();
    return fail("run", "cannot run '" + o.command[0] + "': " + backends::start_failure(o.command[0], error_number),
                error_number == ENOENT ? 127 : 126);
  }
  r.status = pump_job(*job, recorder, p.step_re);
  job.reset();
  if (mark_file) mark_file->remove_path();
  if (!p.hook_folder.empty()) std::filesystem::remove_all(p.hook_folder, ignored);

  const auto outcome = recorder.oom_messages() ? timeline::Outcome::Oom
                       : r.status == 0         ? timeline::Outcome::Ok
                                               : timeline::Outcome::Failed;
  sink(timeline::end_line(recorder.now(), outcome, r.status, gpu ? gpu->capacity_bytes(recorder.gpus()) : std::nullopt));
  p.out->close();
  r.timeline = read_back(o.out, !p.out->failed(), r.status, outcome);
  r.sampled = gpu != nullptr;
  if (!probe) r.unsampled_why = probe.error();
  return -1;
}

// The job report: the trace folder's sections, the diagnosis of the recording (weighing what the
// trace saw); printed (text on stderr, or --json on stdout) and written (--html). The job's exit status.
int report(const RunOptions& o, const Prepared& p, Recorded& rec) {
  report::JobReport r;
  r.timeline = std::move(rec.timeline);
  r.run = report::JobRun{rec.status, p.out->failed() ? "" : o.out, rec.sampled};
  if (p.trace) {
    auto traces = load_traces(p.trace->directory);
    trace::TraceSet set = traces ? std::move(*traces) : trace::TraceSet{{}, {traces.error()}};
    if (!set.processes.empty()) r.traced = trace::build_overlay(set.processes, r.timeline, rec.start_unix_ns);
    r.call_sites = std::move(set);
  }
  if (o.trace_python) {
    auto stacks = load_python_stacks(p.trace_dir);
    r.python = stacks ? std::move(*stacks) : trace::PythonStackSet{{}, {stacks.error()}};
    r.oom_snapshots = load_oom_snapshots(p.trace_dir, r.python->problems);
  }
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace");
  // a job of several processes is judged process by process (core/timeline/job.hpp).
  auto judged = timeline::judge_job({r.timeline}, r.traced ? std::optional(timeline::trace_evidence(*r.traced)) : std::nullopt);
  r.timeline = std::move(judged.headline);
  r.diagnosis = std::move(judged.diagnosis);
  r.processes = std::move(judged.processes);
  if (!rec.sampled) explain_unsampled(r.diagnosis, rec.unsampled_why);
  if (auto q = quantify_job(p.input, r.timeline, r.diagnosis); !q) fail("run", q.error(), 0);
  if (o.json) print(json_document("vramdoc.run/1", report::render_json(r)));
  else if (!o.no_report) std::fputs(highlight(report::render_text(r), style_for(stderr)).c_str(), stderr);
  bool html_lost = false;
  if (!o.html.empty()) {
    if (auto w = write_text_file(o.html, report::render_html(r)); !w) html_lost = true, fail("run", w.error(), 0);
  }
  // Said when it happened; said again last, where it is seen. A job that succeeded ends with 2.
  if (p.out->failed()) fail("run", "WARNING: " + p.out->error() + ": this run has no timeline", 0);
  return rec.status == 0 && (p.out->failed() || html_lost) ? kUsage : rec.status;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  RunOptions o;
  if (int rc = parse_run(args, o); rc >= 0) return rc;
  auto prepared = prepare(o);
  if (!prepared) return fail("run", prepared.error());
  Recorded recorded;
  if (int rc = record(o, *prepared, recorded); rc >= 0) return rc;
  return report(o, *prepared, recorded);
}

}  // namespace vramdoc::cli
