// vramdoc probe: find the largest batch (or sequence) that fits by running the job.
#include <CLI/CLI.hpp>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <unistd.h>

#include "backends/nvml.hpp"
#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/probe_trial.hpp"
#include "cli/timeline_io.hpp"
#include "core/probe/report.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct ProbeOptions {
  std::string command;
  std::uint64_t start = 1;
  std::uint64_t max = 4096;
  long steps = 0;
  std::string trial_time;
  std::string budget = "30m";
  std::string interval = "20ms";
  std::string step_regex = R"((^|[^a-z])(step|iter|iteration)[ :=#]*[0-9]+)";
  double margin_percent = 10;
  std::string gpu_memory;
  unsigned device = 0;
  std::string keep_dir;
  std::string html;
  bool json = false;
  EstimatorArgs job;  // --config/--model: the estimator's curve guides the first jumps
};

void on_signal(int) { interrupt_trials(); }

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("vramdoc") : p.string();
}

// The card's capacity: --gpu-memory, else the device's total memory from the driver.
std::optional<std::uint64_t> capacity(const ProbeOptions& o, std::string& why) {
  if (!o.gpu_memory.empty()) return *parse_memory_size(o.gpu_memory);
  auto nvml = backends::Nvml::open();
  if (!nvml) {
    why = nvml.error();
    return std::nullopt;
  }
  auto mem = (*nvml)->memory(o.device);
  if (!mem || !mem->total_bytes) {
    why = mem ? "the driver does not report the total memory" : mem.error();
    return std::nullopt;
  }
  return mem->total_bytes;
}

// With --config/--model: the estimator's process peak at a value of the probed parameter (the
// other one from --batch / --seq). Errors (a bad config, the other value missing) are for exit 2.
Result<std::function<std::optional<double>(std::uint64_t)>> probe_estimate(EstimatorArgs job, const std::string& parameter) {
  using Estimate = std::function<std::optional<double>(std::uint64_t)>;
  if (job.config.empty() && job.model.empty()) return Estimate{};
  (parameter == "batch" ? job.batch : job.seq) = "1";  // the probed value replaces it in each trial
  auto input = read_job(job);
  if (!input) return make_error(input.error());
  return Estimate{[in = **input, parameter](std::uint64_t v) -> std::optional<double> {
    auto options = in.options;
    (parameter == "batch" ? options.batch : options.seq) = v;
    auto e = estimator::estimate(in.model, options);
    return e ? std::optional<double>(static_cast<double>(e->process_bytes)) : std::nullopt;
  }};
}

// The checked options: which placeholder, the estimator's guide, the trial and overall time limits.
struct ProbePlan {
  std::string parameter;  // "batch" or "seq"
  std::function<std::optional<double>(std::uint64_t)> estimate;  // with --config / --model
  double trial_seconds = 0, budget_seconds = 0;
};

void add_probe_options(CLI::App& app, ProbeOptions& o) {
  app.add_option("--cmd", o.command, "the job, with {batch} or {seq} where the value goes")->required();
  app.add_option("--start", o.start, "first value (default 1)")->check(CLI::Range(1ULL, 1ULL << 40));
  app.add_option("--max", o.max, "never try above this value (default 4096)")->check(CLI::Range(1ULL, 1ULL << 40));
  app.add_option("--steps", o.steps, "stop each trial after this many step lines (--step-regex)")->check(CLI::Range(0L, 1L << 30));
  app.add_option("--trial-time", o.trial_time, "stop each trial after this long (e.g. 60s); a trial still running then counts as ok");
  app.add_option("--budget", o.budget, "stop probing after this long overall (default 30m)");
  app.add_option("--interval", o.interval, "memory sampling interval (default 20ms)");
  app.add_option("--step-regex", o.step_regex, "a line of the job's output that ends a step");
  app.add_option("--margin", o.margin_percent, "headroom kept below the card's memory, percent (default 10)")->check(CLI::Range(0.0, 90.0));
  app.add_option("--gpu-memory", o.gpu_memory, "the card's memory (default: the device's total)");
  app.add_option("--device", o.device, "GPU index for the card's memory (default 0)");
  app.add_option("--keep", o.keep_dir, "keep each trial's timeline and log in this folder");
  app.add_option("--html", o.html, "write an HTML report with the chart of peak memory");
  app.add_flag("--json", o.json, "print the result as JSON");
  add_estimator_options(app, o.job, EstimatorUse::Job);
}

// Checks what CLI11 cannot: one placeholder, the model's options, --start <= --max, the durations and sizes.
Result<ProbePlan> check_options(const ProbeOptions& o) {
  bool has_batch = o.command.find("{batch}") != std::string::npos;
  bool has_seq = o.command.find("{seq}") != std::string::npos;
  if (has_batch == has_seq)
    return make_error("--cmd needs exactly one of {batch} or {seq} where the value goes, e.g. "
                      "--cmd 'python train.py --batch-size {batch}'");
  const std::string parameter = has_batch ? "batch" : "seq";
  auto estimate = probe_estimate(o.job, parameter);
  if (!estimate) return make_error(estimate.error());
  if (o.start > o.max) return make_error("--start is above --max");
  auto trial_seconds = o.trial_time.empty() ? Result<double>(0.0) : parse_duration(o.trial_time);
  auto budget_seconds = parse_duration(o.budget);
  auto interval = parse_duration(o.interval);
  if (!trial_seconds) return make_error("--trial-time: " + trial_seconds.error());
  if (!budget_seconds) return make_error("--budget: " + budget_seconds.error());
  if (!interval || *interval <= 0) return make_error("--interval: must be a positive duration");
  if (!o.gpu_memory.empty() && !parse_memory_size(o.gpu_memory)) return make_error("--gpu-memory: " + parse_memory_size(o.gpu_memory).error());
  return ProbePlan{parameter, std::move(*estimate), *trial_seconds, *budget_seconds};
}

// Where the trials' files go: --keep DIR (created), else a temporary folder (`temporary` set).
Result<std::string> trial_folder(const ProbeOptions& o, bool& temporary) {
  temporary = o.keep_dir.empty();
  if (temporary) {
    std::string pattern = (std::filesystem::temp_directory_path() / "vramdoc-probe-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return make_error("cannot create a temporary folder");
    return pattern;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.keep_dir, ec);
  if (ec) return make_error("--keep " + o.keep_dir + ": " + ec.message());
  return o.keep_dir;
}

// Runs trials as the search asks until it is done, the budget is spent or the user interrupts;
// true when it stopped early (then the report says incomplete).
bool search_trials(probe::Search& search, const TrialSettings& settings, const ProbeOptions& o, const ProbePlan& plan) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const auto started = std::chrono::steady_clock::now();
  while (auto value = search.next()) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (spent >= plan.budget_seconds || trials_interrupted()) return true;
    std::fprintf(stderr, "vramdoc probe: trying %s %llu ...\n", plan.parameter.c_str(), static_cast<unsigned long long>(*value));
    auto trial = run_trial(settings, substitute(o.command, plan.parameter, *value), *value);
    if (trials_interrupted()) return true;
    std::fprintf(stderr, "vramdoc probe: %s\n", probe::progress_line(plan.parameter, trial).c_str());
    search.record(trial);
  }
  return false;
}

}  // namespace

int cmd_probe(const std::vector<std::string>& args) {
  ProbeOptions o;
  CLI::App app{"Find the largest batch (or sequence length) that fits: run the job with {batch} (or {seq}) "
               "replaced: from --start, jumping near the limit that the trials' peaks (or the estimator, with --config) predict, "
               "then narrowing it down there; without peaks or the card's memory, doubling then bisecting.",
               "probe"};
  add_probe_options(app, o);
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto plan = check_options(o);
  if (!plan) return fail("probe", plan.error());

  std::string why;
  auto card = capacity(o, why);
  if (!card) std::fprintf(stderr, "vramdoc probe: card memory unknown (%s); recommendations step down by the margin\n", why.c_str());
  bool temporary = false;
  auto folder = trial_folder(o, temporary);
  if (!folder) return fail("probe", folder.error());
  const TrialSettings settings{self_exe(), *folder, o.interval, o.step_regex, o.steps, plan->trial_seconds};
  probe::Search search({o.start, o.max, card, o.margin_percent / 100.0, plan->estimate});
  const bool stopped_early = search_trials(search, settings, o, *plan);
  if (temporary) std::filesystem::remove_all(*folder);

  auto report = probe::conclude(search, plan->parameter, card, o.margin_percent / 100.0, stopped_early);
  if (!o.html.empty()) {
    if (auto w = write_text_file(o.html, probe::render_html(report)); !w) return fail("probe", w.error());
  }
  print(o.json ? json_document("vramdoc.probe/1", probe::to_json(report).dump(2) + "\n") : probe::render_text(report));
  return report.reason == probe::StopReason::Bracketed || report.reason == probe::StopReason::ReachedMax ? kOk : kFailure;
}

}  // namespace vramdoc::cli
