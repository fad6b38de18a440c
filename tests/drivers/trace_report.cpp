// Test driver for the allocation tracer's CLI support until `vramdoc run --trace` wires it:
//   vramdoc-trace-report [--json] DIR   the report of DIR/trace.*.vdt
//   vramdoc-trace-report --env DIR      the KEY=VALUE lines a traced job needs
#include <cstdio>
#include <string>

#include "cli/trace_support.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (argc < 2 || argc > 3 || (argc == 3 && mode != "--json" && mode != "--env")) {
    std::fprintf(stderr, "usage: vramdoc-trace-report [--json|--env] DIR\n");
    return 2;
  }
  const std::string dir = argv[argc - 1];
  if (mode == "--env") {
    auto setup = vramdoc::cli::prepare_trace(dir);
    if (!setup) { std::fprintf(stderr, "vramdoc-trace-report: %s\n", setup.error().c_str()); return 2; }
    for (const auto& [key, value] : setup->environment) std::printf("%s=%s\n", key.c_str(), value.c_str());
    return 0;
  }
  auto traces = vramdoc::cli::load_traces(dir);
  if (!traces) { std::fprintf(stderr, "vramdoc-trace-report: %s\n", traces.error().c_str()); return 2; }
  if (!traces->problems.empty()) { std::fprintf(stderr, "vramdoc-trace-report: %s\n", traces->problems.front().c_str()); return 2; }
  const std::string report = mode == "--json" ? vramdoc::trace::trace_report_json(traces->processes).dump(2) + "\n"
                                              : vramdoc::trace::render_trace_text(traces->processes);
  std::fputs(report.c_str(), stdout);
  return 0;
}
