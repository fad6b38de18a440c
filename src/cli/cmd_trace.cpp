// vramdoc trace DIR|FILE.vdt [--json] [--html FILE] [--env]: the allocation tracer's report of a folder of
// traces (trace.PID.vdt), or the environment that makes any CUDA program write one.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "backends/trace/folder.hpp"
#include "backends/trace/setup.hpp"
#include "cli/command.hpp"
#include "cli/features.hpp"
#include "core/report/job_report.hpp"

namespace vramdoc::cli {

namespace {

// The KEY=VALUE lines that trace a job started outside vramdoc into DIR (created).
int print_environment(const std::string& dir) {
  auto setup = backends::prepare_trace(dir, have_cupti_tracer());
  if (!setup) return fail("trace", setup.error());
  std::string lines;
  for (const auto& [key, value] : setup->environment) lines += key + "=" + value + "\n";
  print(lines);
  return kOk;
}

}  // namespace

int cmd_trace(const std::vector<std::string>& args) {
  CLI::App app{"Report the allocation traces in DIR (trace.PID.vdt, written by vramdoc run --trace): what was alive "
               "at exit, at the traced peak, growing until the peak, and refused, by call site with the stacks.",
               "trace"};
  std::string dir, html;
  bool json = false, env = false;
  app.add_option("DIR", dir, "the trace folder (vramdoc run --trace: the timeline's name + .trace), or one .vdt file")->required();
  app.add_flag("--json", json, "print one JSON object (processes with every group's full stack, problems) instead of text");
  app.add_option("--html", html, "also write a self-contained HTML page (traced bytes over time, call sites) to this file");
  app.add_flag("--env", env,
               "instead, print the KEY=VALUE lines that make a CUDA program started without vramdoc run write its "
               "trace into DIR (created)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (env) return print_environment(dir);

  auto traces = backends::read_traces(dir);
  if (!traces) return fail("trace", traces.error());
  for (const auto& problem : traces->problems) fail("trace", problem);
  if (traces->processes.empty() && !traces->problems.empty()) return kUsage;
  if (!html.empty()) {
    if (auto w = write_text_file(html, report::render_trace_page(*traces, dir)); !w) return fail("trace", w.error());
  }
  print(json ? report::render_call_sites_json(*traces) : trace::render_trace_text(traces->processes));
  return traces->problems.empty() ? kOk : kUsage;  // a file that could not be read is bad input
}

}  // namespace vramdoc::cli
