// vramdoc run [OPTIONS] -- COMMAND ARGS...: run a job, record its GPU memory, diagnose it.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <regex>
#include <unistd.h>

#include "backends/process_job.hpp"
#include "backends/process_sampler.hpp"
#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/style.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/writer.hpp"
#include "core/trace/overlay.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct RunOptions {
  std::string interval = "20ms", out, html, step_regex, trace_dir;
  JobArgs job;
  bool trace = false, trace_python = false;
  std::vector<std::string> command;
};

std::string default_out_name(const std::string& program) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return "vramdoc-" + std::filesystem::path(program).filename().string() + "-" + stamp + ".jsonl";
}

// The step number in a --step-regex match: its first group when numeric, else a count.
std::string step_label(const std::smatch& m, long& counter) {
  ++counter;
  if (m.size() > 1 && m[1].matched) {
    const std::string g = m[1].str();
    if (!g.empty() && g.find_first_not_of("0123456789") == std::string::npos && g.size() < 12) return "step " + g;
  }
  return "step " + std::to_string(counter - 1);
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  RunOptions o;
  auto dash = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> own(args.begin(), dash);
  if (dash != args.end()) o.command.assign(dash + 1, args.end());
  CLI::App app{"Run a job, record its GPU memory timeline (NVML, the job's whole process tree), and diagnose it:\n"
               "leak, insufficient, fragmentation, plateau or stable. The exit status is the job's.\n"
               "The job may write \"step N\" lines to the file named by $VRAMDOC_MARK_FILE to mark steps.", "run"};
  app.add_option("--interval", o.interval, "sampling interval (default 20ms)");
  app.add_option("--out", o.out, "the timeline file, written while the job runs (default vramdoc-COMMAND-TIME.jsonl)");
  app.add_option("--html", o.html, "write the HTML report here when the job ends");
  app.add_option("--step-regex", o.step_regex, "a line of the job's output matching this ends a step (group 1: its number)");
  app.add_flag("--trace", o.trace, "record every device allocation with its call stack (CUPTI tracer, docs/trace.md)");
  app.add_flag("--trace-python", o.trace_python,
               "name the Python lines holding PyTorch's memory at exit and at the first OOM error (docs/trace.md)");
  app.add_option("--trace-dir", o.trace_dir, "where the traced processes write their traces (default: the timeline's name + .trace)");
  add_job_options(app, o.job);
  if (int rc = parse_args(app, own); rc >= 0) return rc;
  if (o.command.empty()) return fail("run", "no command: vramdoc run [OPTIONS] -- COMMAND ARGS...");
  auto input = read_job(o.job);
  if (!input) return fail("run", input.error());
  auto interval = parse_duration(o.interval);
  if (!interval) return fail("run", interval.error());
  if (*interval < 0.001 || *interval > 60) return fail("run", "--interval must be between 1ms and 60s");
  std::optional<std::regex> step_re;
  if (!o.step_regex.empty()) {
    try {
      step_re.emplace(o.step_regex);
    } catch (const std::regex_error& e) {
      return fail("run", "--step-regex '" + o.step_regex + "' is not a valid regular expression: " + e.what());
    }
  }
  if (o.out.empty()) o.out = default_out_name(o.command[0]);
  auto opened = TimelineFile::open(o.out);
  if (!opened) return fail("run", opened.error());
  TimelineFile& out = **opened;

  std::optional<TraceSetup> trace;
  std::string trace_dir = o.trace_dir;
  if (trace_dir.empty()) {
    trace_dir = (o.out.size() > 6 && o.out.ends_with(".jsonl") ? o.out.substr(0, o.out.size() - 6) : o.out) + ".trace";
  }
  if (o.trace || (!o.trace_dir.empty() && !o.trace_python)) {
    auto setup = prepare_trace(trace_dir);
    if (!setup) {
      out.discard();
      return fail("run", "--trace: " + setup.error());
    }
    trace = std::move(setup.value());
  }
  std::vector<std::pair<std::string, std::string>> python_env;
  if (o.trace_python) {
    auto hook = prepare_python_hook(trace_dir);
    if (!hook) {
      out.discard();
      return fail("run", "--trace-python: " + hook.error());
    }
    python_env = std::move(*hook);
  }

  // The marker file the job may write "step N" lines to.
  std::string mark_file = (std::filesystem::temp_directory_path() / "vramdoc-marks-XXXXXX").string();
  const int mark_fd = mkstemp(mark_file.data());
  if (mark_fd >= 0) close(mark_fd);
  else mark_file.clear();

  auto probe = backends::open_nvml_job_probe();
  if (!probe) std::fprintf(stderr, "vramdoc run: GPU memory sampling unavailable (%s); running the job without it\n", probe.error().c_str());
  backends::JobMemoryProbe* p = probe ? probe->get() : nullptr;
  timeline::Header header;
  header.name = std::filesystem::path(o.command[0]).filename().string();
  header.command = o.command;
  header.interval_seconds = *interval;
  if (p) header.device = p->device_name(), header.total_bytes = p->capacity_bytes({});
  for (const auto& name : timeline::allocator_settings())  // what the job inherits that changes what the driver sees
    if (const char* value = std::getenv(name.c_str())) header.environment[name] = value;
  auto sink = [&out](const std::string& line) { out.write(line); };
  sink(timeline::header_line(header));
  // The wall clock at the timeline's t = 0, to align the traced bytes exactly (docs/trace.md).
  const auto recording_start_unix_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count());
  backends::JobRecorder recorder(p, *interval, mark_file, sink);

  // The timeline's path lets the job's own tools (the Python integrations) diagnose it at an OOM.
  std::vector<std::pair<std::string, std::string>> env = {{"VRAMDOC_MARK_FILE", mark_file},
                                                          {"VRAMDOC_TIMELINE", std::filesystem::absolute(o.out).string()}};
  if (!getenv("PYTHONUNBUFFERED")) env.emplace_back("PYTHONUNBUFFERED", "1");  // line by line through our pipe
  if (trace) env.insert(env.end(), trace->environment.begin(), trace->environment.end());
  env.insert(env.end(), python_env.begin(), python_env.end());
  int error_number = 0;
  auto job = backends::Job::start(o.command, env, error_number);
  if (!job) {
    out.discard();
    if (!mark_file.empty()) std::remove(mark_file.c_str());
    return fail("run", "cannot run '" + o.command[0] + "': " + std::strerror(error_number),
                error_number == ENOENT ? 127 : 126);
  }
  int status = 0;
  {
    backends::SignalForwarder forward(job->pid());
    recorder.start(job->pid());
    long steps = 0;
    job->pump_output([&](const std::string& line) {
      std::smatch m;
      if (step_re && std::regex_search(line, m, *step_re)) recorder.mark(step_label(m, steps));
      if (timeline::parse_oom_message(line)) recorder.oom_message(line);
    });
    status = job->wait();
    recorder.stop();
  }
  job.reset();
  if (!mark_file.empty()) std::remove(mark_file.c_str());

  timeline::Timeline tl = recorder.timeline();
  tl.name = header.name;
  tl.device = header.device;
  tl.command = header.command;
  tl.environment = header.environment;
  tl.total_bytes = p ? p->capacity_bytes(recorder.gpus()) : std::nullopt;
  tl.exit_status = status;
  tl.outcome = !tl.messages.empty() ? timeline::Outcome::Oom : status == 0 ? timeline::Outcome::Ok : timeline::Outcome::Failed;
  sink(timeline::end_line(recorder.now(), tl.outcome, status, tl.total_bytes));
  out.close();

  std::optional<timeline::TracedSeries> traced_bytes;
  std::vector<std::string> warnings;  // render_trace_report below reports the same problems
  if (trace) traced_bytes = overlay_from_dir(trace->directory, tl, recording_start_unix_ns, warnings);
  auto diagnosis = timeline::classify(tl, traced_bytes ? std::optional(timeline::trace_evidence(*traced_bytes)) : std::nullopt);
  if (!p) explain_unsampled(diagnosis, probe.error());
  if (auto q = quantify_job(*input, tl, diagnosis); !q) fail("run", q.error(), 0);
  std::string report = "\nvramdoc run: the job exited with status " + std::to_string(status) + "; timeline: " + (out.failed() ? "none (not written)" : o.out) + "\n";
  report += timeline::render_text(tl, diagnosis);
  std::vector<timeline::Appendix> appendices;
  if (trace) {
    if (traced_bytes) report += trace::render_overlay_text(*traced_bytes, tl);
    auto traced = render_trace_report(trace->directory, false);
    const std::string text = traced ? *traced : "vramdoc run: --trace: " + traced.error() + "\n";
    report += "\n" + text;
    appendices.push_back({"call-sites", "Call sites (allocation tracer)", text});
  }
  if (o.trace_python) {
    auto stacks = load_python_stacks(trace_dir);
    const std::string text = stacks ? trace::render_python_stacks_text(stacks->processes, stacks->problems)
                                    : "vramdoc run: --trace-python: " + stacks.error() + "\n";
    report += "\n" + text;
    appendices.push_back({"python-lines", "Python lines (--trace-python)", text});
  }
  std::fputs(highlight(report, style_for(stderr)).c_str(), stderr);
  bool html_lost = false;
  if (!o.html.empty()) {
    const auto html = timeline::render_html(tl, diagnosis, traced_bytes ? &*traced_bytes : nullptr, appendices);
    if (auto w = write_text_file(o.html, html); !w) html_lost = true, fail("run", w.error(), 0);
  }
  // Said when it happened; said again last, where it is seen. A job that succeeded ends with 2.
  if (out.failed()) fail("run", "WARNING: " + out.error() + ": this run has no timeline", 0);
  return status == 0 && (out.failed() || html_lost) ? kUsage : status;
}

}  // namespace vramdoc::cli
