// vramdoc bench: bandwidth and latency of every level of the GPU memory hierarchy.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "backends/cuda_driver.hpp"
#include "cli/command.hpp"
#include "cli/features.hpp"
#include "core/bench/render.hpp"

namespace vramdoc::cli {

int cmd_bench(const std::vector<std::string>& args) {
  CLI::App app("Measure bandwidth and latency at every level of the GPU memory hierarchy: device memory, L2, L1 "
               "and shared memory, pointer-chase latency, the host link, unified memory, host RAM, peer GPUs.",
               "bench");
  bench::BenchOptions options;
  std::string only, svg_path, report_dir;
  bool json = false;
  app.add_flag("--quick", options.quick, "smaller sizes and sweeps: under 30 seconds");
  app.add_option("--only", only, "comma-separated suites: " + bench::suite_list());
  app.add_flag("--json", json, "print the report as JSON instead of the table");
  app.add_option("--svg", svg_path, "write the latency curve and the bandwidth per level as SVG to FILE");
  app.add_option("--report", report_dir, "write bench.txt, bench.json and bench.svg into DIR");
  app.add_option("--memory-share", options.memory_share, "use at most this share of the free device memory")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("--device", options.device_index, "the GPU to measure (CUDA index)")->capture_default_str();
  app.add_option("--samples", options.samples, "timed samples per measure (default 10 quick, 20 full)")
      ->check(CLI::Range(3, 1000));
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (!only.empty()) {
    auto suites = bench::parse_only(only);
    if (!suites) return fail("bench", suites.error());
    options.only = *suites;
  }
  const auto runner = bench_runner();
  if (!runner) return fail("bench", how_to_enable_cuda());
  // Without a driver the CUDA runtime only says its "driver version is insufficient": say what is missing.
  if (auto driver = backends::CudaDriver::open(); !driver) return fail("bench", "cannot use a GPU: " + driver.error());

  const auto t0 = std::chrono::steady_clock::now();
  auto progress = [&](const std::string& step) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "[%6.1f s] %s\n", s, step.c_str());
  };
  auto report = runner(options, progress);
  if (!report) return fail("bench", report.error());

  const std::string text = bench::render_text(*report);
  const std::string json_text = bench::render_json(*report);  // carries its schema, vramdoc.bench/1
  print(json ? json_text : text);
  if (!svg_path.empty()) {
    if (auto w = write_text_file(svg_path, bench::render_svg(*report)); !w) return fail("bench", w.error());
  }
  if (!report_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(report_dir, ec);
    for (const auto& [name, content] : {std::pair{"/bench.txt", &text}, std::pair{"/bench.json", &json_text}}) {
      if (auto w = write_text_file(report_dir + name, *content); !w) return fail("bench", w.error());
    }
    if (auto w = write_text_file(report_dir + "/bench.svg", bench::render_svg(*report)); !w) return fail("bench", w.error());
  }
  for (const auto& m : report->measures) {
    if (!m.error.empty()) return fail("bench", m.level + " " + m.name + " failed: " + m.error);
  }
  return kOk;
}

}  // namespace vramdoc::cli
