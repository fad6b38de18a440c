// vramdoc run [OPTIONS] -- COMMAND ARGS...: run a job, record its GPU memory, diagnose it.
// Phases: prepare (options, the timeline file, tracer and Python hook), record (the job under
// the recorder), report (the file read back and judged as `analyze` judges it).
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

#include "backends/process_identity.hpp"
#include "backends/process_job.hpp"
#include "backends/process_sampler.hpp"
#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/preallocation.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/writer.hpp"
#include "core/trace/overlay.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct RunOptions {
  std::string interval = "20ms", out, html, step_regex, trace_dir;
  JobArgs job;
  bool trace = false, trace_python = false, no_step_hook = false;
  std::vector<std::string> command;
};

// What the job is run with, made before it starts and removed after it.
struct Prepared {
  std::optional<JobInput> input;
  double interval = 0;
  std::optional<std::regex> step_re;
  FILE* out = nullptr;
  std::string trace_dir, mark_file, hook_folder;
  std::optional<TraceSetup> trace;
  std::vector<std::pair<std::string, std::string>> env;
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

void add_options(CLI::App& app, RunOptions& o) {
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
  app.add_option("--trace-dir", o.trace_dir, "where the traced processes write their traces (default: the timeline's name + .trace)");
  add_job_options(app, o.job);
}

void clean_up(Prepared& p, const std::string& out_path, bool remove_out) {
  if (p.out) std::fclose(p.out), p.out = nullptr;
  if (remove_out) std::remove(out_path.c_str());
  if (!p.mark_file.empty()) std::remove(p.mark_file.c_str());
  std::error_code ec;
  if (!p.hook_folder.empty()) std::filesystem::remove_all(p.hook_folder, ec);
}

// The tracer, the Python hook (--trace-python and/or the step hook) and the marker file.
Result<bool> prepare_instruments(const RunOptions& o, Prepared& p) {
  p.trace_dir = o.trace_dir;
  if (p.trace_dir.empty()) p.trace_dir = (o.out.size() > 6 && o.out.ends_with(".jsonl") ? o.out.substr(0, o.out.size() - 6) : o.out) + ".trace";
  if (o.trace || (!o.trace_dir.empty() && !o.trace_python)) {
    auto setup = prepare_trace(p.trace_dir);
    if (!setup) return make_error("--trace: " + setup.error());
    p.trace = std::move(setup.value());
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
  std::error_code ec;  // no folder for temporary files: the job runs without a marker file
  const auto tmp = std::filesystem::temp_directory_path(ec);
  p.mark_file = ec ? "" : (tmp / "vramdoc-marks-XXXXXX").string();
  const int fd = p.mark_file.empty() ? -1 : mkstemp(p.mark_file.data());
  if (fd >= 0) close(fd);
  else p.mark_file.clear();
  p.env.emplace_back("VRAMDOC_MARK_FILE", p.mark_file);
  // The timeline's path lets the job's own tools (the Python integrations) diagnose it at an OOM.
  p.env.emplace_back("VRAMDOC_TIMELINE", std::filesystem::absolute(o.out).string());
  if (!getenv("PYTHONUNBUFFERED")) p.env.emplace_back("PYTHONUNBUFFERED", "1");  // line by line through our pipe
  return true;
}

Result<bool> prepare(RunOptions& o, Prepared& p) {
  if (o.command.empty()) return make_error("no command: vramdoc run [OPTIONS] -- COMMAND ARGS...");
  auto input = read_job(o.job);
  if (!input) return make_error(input.error());
  p.input = std::move(*input);
  auto interval = parse_duration(o.interval);
  if (!interval) return make_error(interval.error());
  if (*interval < 0.001 || *interval > 60) return make_error("--interval must be between 1ms and 60s");
  p.interval = *interval;
  if (!o.step_regex.empty()) {
    try {
      p.step_re.emplace(o.step_regex);
    } catch (const std::regex_error& e) {
      return make_error("--step-regex '" + o.step_regex + "' is not a valid regular expression: " + e.what());
    }
  }
  if (o.out.empty()) o.out = default_out_name(o.command[0]);
  p.out = std::fopen(o.out.c_str(), "w");
  if (!p.out) return make_error("cannot write " + o.out + ": " + std::strerror(errno));
  return prepare_instruments(o, p);
}

struct Recorded {
  int start_error = 0;  // errno when the command could not be started
  int status = 0;
  bool sampled = false;  // a driver was there to sample
  std::uint64_t start_unix_ns = 0;  // the wall clock at the timeline's t = 0
};

// Runs the job under the recorder; every line goes to the timeline file as it comes.
Recorded record(const RunOptions& o, Prepared& p) {
  auto probe = backends::open_nvml_job_probe();
  if (!probe) std::fprintf(stderr, "vramdoc run: GPU memory sampling unavailable (%s); running the job without it\n", probe.error().c_str());
  backends::JobMemoryProbe* nvml = probe ? probe->get() : nullptr;
  timeline::Header header;
  header.name = std::filesystem::path(o.command[0]).filename().string();
  header.command = o.command;
  header.interval_seconds = p.interval;
  header.host = backends::host_name();
  if (nvml) {
    header.device = nvml->device_name();
    header.gpus = nvml->gpu_infos();
    if (header.gpus.size() == 1) header.total_bytes = nvml->capacity_bytes({});  // several: each GPU's, in `gpus`
  }
  for (const auto& name : timeline::allocator_settings())  // what the job inherits that changes what the driver sees
    if (const char* value = std::getenv(name.c_str())) header.environment[name] = value;
  FILE* out = p.out;
  auto sink = [out](const std::string& line) { std::fputs(line.c_str(), out), std::fflush(out); };
  Recorded r;
  r.sampled = nvml != nullptr;
  const auto wall = std::chrono::system_clock::now().time_since_epoch();
  r.start_unix_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count());
  header.start_unix_seconds = std::chrono::duration<double>(wall).count();
  sink(timeline::header_line(header));
  backends::JobRecorder recorder(nvml, p.interval, p.mark_file, header.host, sink, header.heartbeat_seconds);
  int error_number = 0;
  auto job = backends::Job::start(o.command, p.env, error_number);
  if (!job) {
    r.start_error = error_number;
    return r;
  }
  {
    backends::SignalForwarder forward(job->pid());
    recorder.start(job->pid());
    long steps = 0;
    job->pump_output([&](const std::string& line) {
      std::smatch m;
      if (p.step_re && std::regex_search(line, m, *p.step_re)) recorder.mark(step_label(m, steps));
      if (timeline::parse_oom_message(line)) recorder.oom_message(line);
    });
    r.status = job->wait();
    recorder.stop();
  }
  const auto outcome = recorder.oom_messages() ? timeline::Outcome::Oom : r.status == 0 ? timeline::Outcome::Ok : timeline::Outcome::Failed;
  sink(timeline::end_line(recorder.now(), outcome, r.status, nvml ? nvml->capacity_bytes(recorder.gpus()) : std::nullopt));
  return r;
}

// The report: the timeline file read back and judged as `analyze` judges it, then the traces.
void report(const RunOptions& o, const Prepared& p, const Recorded& r) {
  std::string text = "\nvramdoc run: the job exited with status " + std::to_string(r.status) + "; timeline: " + o.out + "\n";
  if (!r.sampled) text += "vramdoc run: no GPU memory was sampled (sampling unavailable)\n";
  auto tl = load_timeline(o.out);
  if (!tl) {
    std::fputs((text + "vramdoc run: cannot read the timeline back for a diagnosis: " + tl.error() + "\n").c_str(), stderr);
    return;
  }
  std::optional<timeline::TracedSeries> traced_bytes;
  std::vector<std::string> warnings;  // render_trace_report below reports the same problems
  if (p.trace) traced_bytes = overlay_from_dir(p.trace->directory, *tl, r.start_unix_ns, warnings);
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace").
  auto judged = timeline::judge_job({*tl}, traced_bytes ? std::optional(timeline::trace_evidence(*traced_bytes)) : std::nullopt);
  if (auto q = quantify_job(p.input, judged.headline, judged.diagnosis); !q) fail("run", q.error(), 0);
  const auto* processes = judged.processes ? &*judged.processes : nullptr;
  text += timeline::render_text(judged.headline, judged.diagnosis, processes);
  std::vector<timeline::Appendix> appendices;
  if (p.trace) {
    if (traced_bytes) text += trace::render_overlay_text(*traced_bytes, judged.headline);
    auto traced = render_trace_report(p.trace->directory, false);
    const std::string section = traced ? *traced : "vramdoc run: --trace: " + traced.error() + "\n";
    text += "\n" + section;
    appendices.push_back({"call-sites", "Call sites (allocation tracer)", section});
  }
  if (o.trace_python) {
    auto stacks = load_python_stacks(p.trace_dir);
    const std::string section = stacks ? trace::render_python_stacks_text(stacks->processes, stacks->problems)
                                       : "vramdoc run: --trace-python: " + stacks.error() + "\n";
    text += "\n" + section;
    appendices.push_back({"python-lines", "Python lines (--trace-python)", section});
  }
  std::fputs(text.c_str(), stderr);
  if (!o.html.empty()) {
    const auto html = timeline::render_html(judged.headline, judged.diagnosis, traced_bytes ? &*traced_bytes : nullptr, appendices, processes);
    if (auto w = write_text_file(o.html, html); !w) fail("run", w.error(), 0);
  }
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  RunOptions o;
  auto dash = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> own(args.begin(), dash);
  if (dash != args.end()) o.command.assign(dash + 1, args.end());
  CLI::App app{"Run a job, record its GPU memory timeline (NVML, the job's whole process tree, per process and GPU), and\n"
               "diagnose it: leak, insufficient, fragmentation, plateau or stable, per process and for the job.\n"
               "Usage: vramdoc run [OPTIONS] -- COMMAND ARGS...\n"
               "The job may write \"step N\" lines to the file named by $VRAMDOC_MARK_FILE to mark steps.", "run"};
  add_options(app, o);
  if (int rc = parse_args(app, own); rc >= 0) return rc;
  Prepared p;
  if (auto ready = prepare(o, p); !ready) {
    clean_up(p, o.out, p.out != nullptr);
    return fail("run", ready.error());
  }
  const Recorded recorded = record(o, p);
  if (recorded.start_error) {  // 127 (not found) or 126, as a shell says
    clean_up(p, o.out, true);
    return fail("run", "cannot run '" + o.command[0] + "': " + std::strerror(recorded.start_error),
                recorded.start_error == ENOENT ? 127 : 126);
  }
  clean_up(p, o.out, false);
  report(o, p, recorded);
  return recorded.status;
}

}  // namespace vramdoc::cli
