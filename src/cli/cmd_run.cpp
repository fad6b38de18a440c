// vramdoc run [OPTIONS] -- COMMAND ARGS...: run a job, record its GPU memory, diagnose it. The
// options checked here; the job recorded by backends/run/session.hpp; the report built by
// core/report/build.hpp, printed (text on stderr, or --json on stdout) and written (--html).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>

#include "backends/run/session.hpp"
#include "backends/trace/folder.hpp"
#include "cli/command.hpp"
#include "cli/estimator_options.hpp"
#include "cli/features.hpp"
#include "cli/style.hpp"
#include "core/report/build.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct RunOptions {
  std::string interval = "20ms", out, html, step_regex, trace_dir, sigterm = "detach";
  EstimatorArgs job;
  bool trace = false, trace_python = false, json = false, no_report = false, no_step_hook = false;
  std::vector<std::string> command;
};

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--interval", o.interval, "sampling interval (default 20ms)");
  app.add_option("--out", o.out, "the timeline file, written while the job runs (default vramdoc-COMMAND-TIME.jsonl)");
  app.add_option("--html", o.html, "write the HTML report here when the job ends");
  app.add_option("--step-regex", o.step_regex, timeline::kStepRegexHelp);
  app.add_flag("--no-step-hook", o.no_step_hook,
               "do not inject the step hook into the job's Python (by default each PyTorch process marks every "
               "optimizer step with torch's allocated and reserved bytes; docs/run-analyze.md)");
  app.add_flag("--trace", o.trace, "record every device allocation with its call stack (CUPTI tracer, docs/trace.md)");
  app.add_flag("--trace-python", o.trace_python,
               "name the Python lines holding PyTorch's memory at exit and at the first OOM error (docs/trace.md)");
  auto* json = app.add_flag("--json", o.json, "print the report as one JSON object on stdout, after the job's own output, instead of the text on stderr");
  app.add_flag("--no-report", o.no_report, "print no report when the job ends (the timeline keeps it all: vramdoc analyze FILE)")
      ->excludes(json);
  app.add_option("--sigterm", o.sigterm,
                 "what SIGTERM sent to vramdoc does: detach (default: vramdoc writes its report and goes, the job goes on) "
                 "or forward (the job gets it, as SIGINT, SIGHUP and SIGQUIT always do)")
      ->check(CLI::IsMember({"detach", "forward"}))
      ->type_name("detach|forward");
  app.add_option("--trace-dir", o.trace_dir, "where the traced processes write their traces (default: the timeline's name + .trace)");
  add_estimator_options(app, o.job, EstimatorUse::Job);
}

// Parses run's options (before "--") and the command (after it) into `request` and `job`. -1 to
// go on, else the exit code.
int parse_run(const std::vector<std::string>& args, RunOptions& o, backends::RunRequest& request,
              std::optional<estimator::JobModel>& job) {
  auto dash = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> own(args.begin(), dash);
  if (dash != args.end()) o.command.assign(dash + 1, args.end());
  CLI::App app{"Run a job, record its GPU memory timeline (NVML, the job's whole process tree, per process and GPU), and\n"
               "diagnose it: leak, insufficient, fragmentation, plateau or stable, per process and for the job.\n"
               "The exit status is the job's; 143 when SIGTERM stopped vramdoc (the job goes on: docs/run-analyze.md).\n"
               "The job may write \"step N\" lines to the file named by $VRAMDOC_MARK_FILE to mark steps.", "run"};
  add_run_options(app, o);
  if (int rc = parse_args(app, own); rc >= 0) return rc;
  if (o.command.empty()) return fail("run", "no command: vramdoc run [OPTIONS] -- COMMAND ARGS...");
  auto input = read_job(o.job);
  if (!input) return fail("run", input.error());
  job = std::move(*input);
  auto interval = parse_duration(o.interval);
  if (!interval) return fail("run", interval.error());
  if (*interval < 0.001 || *interval > 60) return fail("run", "--interval must be between 1ms and 60s");
  if (!o.step_regex.empty()) {
    auto re = timeline::StepRegex::compile(o.step_regex);
    if (!re) return fail("run", re.error());
    request.step_regex.emplace(std::move(*re));
  }
  request.command = o.command, request.interval_seconds = *interval, request.out = o.out;
  request.trace = o.trace, request.trace_python = o.trace_python, request.step_hook = !o.no_step_hook;
  request.trace_dir = o.trace_dir, request.tracer_built = have_cupti_tracer();
  request.forward_sigterm = o.sigterm == "forward";
  request.note = [](const std::string& line) { fail("run", line, 0); };
  return -1;
}

// The report's sources: the recording, and what the trace folder holds.
report::JobSources sources_of(backends::RunRecord& rec, std::optional<estimator::JobModel> job) {
  report::JobSources s;
  s.run = report::JobRun{rec.status, rec.timeline_lost ? "" : rec.timeline_file, rec.sampled, rec.detached_job_pid};
  s.start_unix_ns = rec.start_unix_ns;
  s.unsampled_why = rec.unsampled_why;
  s.job = std::move(job);
  if (rec.trace_dir) s.trace_folder = backends::read_trace_folder(*rec.trace_dir, rec.traces, rec.python, rec.python);
  s.timelines.push_back(std::move(rec.timeline));
  return s;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  RunOptions o;
  backends::RunRequest request;
  std::optional<estimator::JobModel> job;
  if (int rc = parse_run(args, o, request, job); rc >= 0) return rc;
  auto session = backends::RunSession::prepare(std::move(request));
  if (!session) return fail("run", session.error());
  auto recorded = (*session)->record();
  if (auto* failed = std::get_if<backends::NotStarted>(&recorded))
    return fail("run", failed->message, failed->error_number == ENOENT ? 127 : 126);
  auto& rec = std::get<backends::RunRecord>(recorded);
  auto built = report::build_job_report(sources_of(rec, std::move(job)));
  for (const auto& note : built.notes) fail("run", (rec.traces ? "--trace: " : "--trace-python: ") + note, 0);
  if (built.quantify_error) fail("run", *built.quantify_error, 0);
  const report::JobReport& r = built.report;
  if (o.json) print(report::render_json(r));
  else if (!o.no_report) std::fputs(report::render_text(r, style_for(stderr)).c_str(), stderr);
  bool html_lost = false;
  if (!o.html.empty()) {
    if (auto w = write_text_file(o.html, report::render_html(r)); !w) html_lost = true, fail("run", w.error(), 0);
  }
  // Said when it happened; said again last, where it is seen. A job that succeeded ends with 2.
  if (rec.timeline_lost) fail("run", "WARNING: " + *rec.timeline_lost + ": this run has no timeline", 0);
  return rec.status == 0 && (rec.timeline_lost || html_lost) ? kUsage : rec.status;
}

}  // namespace vramdoc::cli
