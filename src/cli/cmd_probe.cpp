// vramdoc probe: find the largest batch (or sequence) that fits by running the job. The options
// checked here; the trials run by backends/probe/trials.hpp, steered by core/probe/search.hpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "backends/nvml.hpp"
#include "backends/probe/trials.hpp"
#include "cli/command.hpp"
#include "cli/estimator_options.hpp"
#include "cli/style.hpp"
#include "core/line_match.hpp"
#include "core/probe/judge.hpp"
#include "core/probe/report.hpp"
#include "core/line_match.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

struct ProbeOptions {
  std::string command;
  std::uint64_t start = 1;
  std::uint64_t max = 4096;
  long steps = 0;
  long max_steps = 100;
  int settle_steps = probe::SettleRule{}.flat_steps;
  int confirm_steps = 50;
  int max_trials = 8;
  std::string trial_time;
  std::string budget = "30m";
  std::string interval = "20ms";
  std::string step_regex = timeline::kDefaultProbeStepRegex;
  double margin_percent = 10;
  std::string gpu_memory;
  unsigned device = 0;
  std::string keep_dir;
  std::string html;
  bool json = false;
  EstimatorArgs job;  // --config/--model: the estimator's curve guides the first jumps
};

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("vramdoc") : p.string();
}

// The checked options: which placeholder, the estimator's guide, the time limits, the card.
struct ProbePlan {
  std::string parameter;  // "batch" or "seq"
  std::function<std::optional<double>(std::uint64_t)> estimate;  // with --config / --model
  double trial_seconds = 0, budget_seconds = 0;
  std::optional<std::uint64_t> card_bytes;  // --gpu-memory, else filled from the driver
  std::optional<timeline::StepRegex> steps;
};

void add_probe_options(CLI::App& app, ProbeOptions& o) {
  app.add_option("--cmd", o.command, "the job, with {batch} or {seq} where the value goes")->required();
  app.add_option("--start", o.start, "first value (default 1)")->check(CLI::Range(1ULL, 1ULL << 40));
  app.add_option("--max", o.max, "never try above this value (default 4096)")->check(CLI::Range(1ULL, 1ULL << 40));
  app.add_option("--steps", o.steps, "run each trial at least this many steps (--step-regex lines or optimizer steps) before it may stop")
      ->check(CLI::Range(0L, 1L << 30));
  app.add_option("--max-steps", o.max_steps, "stop a trial whose memory has not settled after this many steps (default 100; 0: no cap)")
      ->check(CLI::Range(0L, 1L << 30));
  app.add_option("--settle-steps", o.settle_steps, "memory counts as settled when flat for this many steps (default 5)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--confirm-steps", o.confirm_steps, "run the answer again for this many steps before reporting it (default 50; 0: no confirmation)")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--max-trials", o.max_trials, "at most this many trials, the confirmation included (default 8; 0: no cap)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--trial-time", o.trial_time, "stop each trial after this long (e.g. 60s); a trial still running then counts as ok");
  app.add_option("--budget", o.budget, "stop probing after this long overall (default 30m)");
  app.add_option("--interval", o.interval, "memory sampling interval (default 20ms)");
  app.add_option("--step-regex", o.step_regex, timeline::kStepRegexHelp);
  app.add_option("--margin", o.margin_percent, "headroom kept below the card's memory, percent (default 10)")->check(CLI::Range(0.0, 90.0));
  app.add_option("--gpu-memory", o.gpu_memory, "size the job for a card of this memory (default: the device's total); a PyTorch job's allocator is capped to it");
  app.add_option("--device", o.device, "GPU index for the card's memory (default 0)");
  app.add_option("--keep", o.keep_dir, "keep each trial's timeline and log in this folder");
  app.add_option("--html", o.html, "write an HTML report with the chart of peak memory");
  app.add_flag("--json", o.json, "print the result as JSON");
  add_estimator_options(app, o.job, EstimatorUse::Job);
}

// Checks what CLI11 cannot: one placeholder, the model's options, --start <= --max, the durations, sizes and regex.
Result<ProbePlan> check_options(const ProbeOptions& o) {
  bool has_batch = o.command.find("{batch}") != std::string::npos;
  bool has_seq = o.command.find("{seq}") != std::string::npos;
  if (has_batch == has_seq)
    return make_error("--cmd needs exactly one of {batch} or {seq} where the value goes, e.g. "
                      "--cmd 'python train.py --batch-size {batch}'");
  ProbePlan plan;
  plan.parameter = has_batch ? "batch" : "seq";
  EstimatorArgs job = o.job;
  if (!job.config.empty() || !job.model.empty()) (has_batch ? job.batch : job.seq) = "1";  // each trial's value replaces it
  auto input = read_job(job);
  if (!input) return make_error(input.error());
  if (*input) plan.estimate = probe::estimator_guide(std::move(**input), plan.parameter);
  if (o.start > o.max) return make_error("--start is above --max");
  auto trial_seconds = o.trial_time.empty() ? Result<double>(0.0) : parse_duration(o.trial_time);
  auto budget_seconds = parse_duration(o.budget);
  auto interval = parse_duration(o.interval);
  if (!trial_seconds) return make_error("--trial-time: " + trial_seconds.error());
  if (!budget_seconds) return make_error("--budget: " + budget_seconds.error());
  if (!interval || *interval <= 0) return make_error("--interval: must be a positive duration");
  plan.trial_seconds = *trial_seconds, plan.budget_seconds = *budget_seconds;
  if (!o.gpu_memory.empty()) {
    auto bytes = parse_memory_size(o.gpu_memory);
    if (!bytes) return make_error("--gpu-memory: " + bytes.error());
    plan.card_bytes = *bytes;
  }
  if (!o.step_regex.empty()) {
    auto re = timeline::StepRegex::compile(o.step_regex);
    if (!re) return make_error(re.error());
    plan.steps.emplace(std::move(*re));
  }
  return plan;
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

  if (!plan->card_bytes) {
    auto card = backends::device_capacity(o.device);
    if (card) plan->card_bytes = card->total_bytes;
    else fail("probe", "card memory unknown (" + card.error() + "); recommendations step down by the margin", 0);
  }
  bool temporary = false;
  auto folder = backends::trial_folder(o.keep_dir, temporary);
  if (!folder) return fail("probe", folder.error());
  backends::TrialSettings settings;
  settings.self_exe = self_exe(), settings.work_dir = *folder, settings.interval = o.interval;
  settings.step_regex = o.step_regex, settings.steps = o.steps, settings.max_steps = o.max_steps;
  settings.settle.flat_steps = o.settle_steps;
  settings.trial_seconds = plan->trial_seconds;
  if (!o.gpu_memory.empty()) settings.gpu_memory_bytes = plan->card_bytes;  // told a card: the job is held to it
  probe::Search search({o.start, o.max, plan->card_bytes, o.margin_percent / 100.0, plan->estimate, o.max_trials, o.confirm_steps});
  const bool stopped_early = backends::run_search(search, settings, plan->steps, o.command, plan->parameter, plan->budget_seconds,
                                                  [](const std::string& line) { fail("probe", line, 0); });
  if (temporary) {
    std::error_code ignored;
    std::filesystem::remove_all(*folder, ignored);
  }

  auto report = probe::conclude(search, plan->parameter, plan->card_bytes, o.margin_percent / 100.0, stopped_early);
  if (!o.html.empty()) {
    if (auto w = write_text_file(o.html, probe::render_html(report)); !w) return fail("probe", w.error());
  }
  print(o.json ? probe::render_json(report) : probe::render_text(report, style_for(stdout)));
  return probe::verdict_code(report).rfind("fits", 0) == 0 ? kOk : kFailure;
}

}  // namespace vramdoc::cli
