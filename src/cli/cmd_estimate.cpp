// vramdoc estimate: parse the options, load the model (file, directory, cache or preset), ask
// core/estimator/answer.hpp, print JSON or a table. All arithmetic lives in core/estimator.
// `estimate [options] -- python train.py ARGS` (and --from-trace) is backends/capture/script.hpp.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "backends/capture/job.hpp"
#include "backends/capture/script.hpp"
#include "backends/nvml.hpp"
#include "cli/command.hpp"
#include "cli/estimator_options.hpp"
#include "cli/parallel_args.hpp"
#include "cli/style.hpp"
#include "core/estimator/answer.hpp"
#include "core/estimator/quick_start.hpp"
#include "core/estimator/presets.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

namespace est = vramdoc::estimator;

// The shared model and settings options (EstimatorArgs), and estimate's own.
struct Args : EstimatorArgs {
  std::string lora_rank = "16", lora_targets, kv_dtype, logits = "all";
  std::string gpu, gpu_memory;
  std::string quant = "none", new_tokens = "0";
  bool expandable_segments = false;
  ParallelArgs parallel;
  double lora_alpha = 32;
  bool json = false, list_models = false, list_gpus = false;
  bool max_batch = false, max_seq = false;
  std::string steps = "3", capture_timeout = "600", from_trace, save_trace;  // estimate -- python train.py
  bool show_output = false;
};

// The shared options (estimator_options), then estimate's own.
Result<est::Options> to_options(const Args& a) {
  auto shared = estimator_options(a);
  if (!shared) return make_error(shared.error());
  est::Options o = *shared;
  auto rank = positive_integer(a.lora_rank, "--lora-rank");
  if (!rank) return make_error(rank.error());
  o.lora_rank = *rank;
  std::stringstream targets(a.lora_targets);
  for (std::string t; std::getline(targets, t, ',');) {
    if (!t.empty()) o.lora_targets.push_back(t);
  }
  if (!a.kv_dtype.empty()) {
    auto kv = est::parse_kv_dtype(a.kv_dtype);
    if (!kv) return make_error(kv.error());
    o.kv_bytes_per_element = *kv;
  }
  if (a.logits != "all" && a.logits != "last") return make_error("--logits must be 'all' or 'last', got '" + a.logits + "'");
  o.logits_last_only = a.logits == "last";
  if (auto p = apply_parallel(a.parallel, o); !p) return make_error(p.error());
  auto quant = est::parse_quant(a.quant);
  if (!quant) return make_error(quant.error());
  o.quant = *quant;
  if (a.new_tokens != "0") {
    auto n = positive_integer(a.new_tokens, "--new-tokens");
    if (!n) return make_error(n.error());
    o.new_tokens = *n;
  }
  o.expandable_segments = a.expandable_segments;
  return o;
}

// The local GPU 0, when the driver shows one: the default target.
std::optional<est::LocalGpu> local_gpu() {
  auto card = backends::device_capacity(0);
  if (!card) return std::nullopt;
  return est::LocalGpu{card->name ? *card->name : "", card->total_bytes};
}

void add_options(CLI::App& app, Args& a) {
  add_estimator_options(app, a, EstimatorUse::Estimate);
  app.add_flag("--list-models", a.list_models, "list the built-in models (with --json: as JSON)");
  app.add_flag("--list-gpus", a.list_gpus, "list the GPU cards --gpu knows (with --json: as JSON)");
  app.add_option("--lora-rank", a.lora_rank, "LoRA rank r")->capture_default_str();
  app.add_option("--lora-alpha", a.lora_alpha, "LoRA alpha (scales the update; no memory effect)");
  app.add_option("--lora-targets", a.lora_targets, "comma-separated module names (default: PEFT's for the model)");
  app.add_option("--kv-dtype", a.kv_dtype, "KV cache dtype for inference: fp32 | bf16 | fp16 | fp8 | int8");
  app.add_option("--logits", a.logits, "all (transformers' default) | last")->capture_default_str();
  add_parallel_options(app, a.parallel);
  app.add_option("--gpu", a.gpu, "a card to fit on, e.g. 'RTX 4090', H100, or the name nvidia-smi prints (see --list-gpus); default: the local GPU 0 when present");
  app.add_option("--gpu-memory", a.gpu_memory, "memory to fit in, with its unit: 24GiB, 80GB");
  app.add_flag("--max-batch", a.max_batch, "find the largest batch that fits (needs --gpu or --gpu-memory)");
  app.add_flag("--max-seq", a.max_seq, "find the largest sequence length that fits");
  app.add_option("--quant", a.quant, "inference with weights quantised on load: none | int8 | int4 (bitsandbytes) | fp8")
      ->capture_default_str();
  app.add_option("--new-tokens", a.new_tokens, "inference: tokens generate() adds after the prompt (KV cache grows)");
  app.add_flag("--expandable-segments", a.expandable_segments, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  app.add_flag("--json", a.json, "one JSON object instead of the table");
  app.add_option("--steps", a.steps, "with -- COMMAND: optimizer steps (or forwards under no_grad) to capture")
      ->capture_default_str()->type_name("N");
  app.add_option("--capture-timeout", a.capture_timeout, "with -- COMMAND: seconds before the capture is stopped")
      ->capture_default_str()->type_name("SECONDS");
  app.add_option("--from-trace", a.from_trace, "replay a trace the capture wrote instead of running a command")->type_name("FILE");
  app.add_option("--save-trace", a.save_trace, "with -- COMMAND: keep the capture's trace in this file (replay it with --from-trace)")
      ->type_name("FILE");
  app.add_flag("--show-output", a.show_output, "with -- COMMAND: show the job's own output");
}

// `estimate [options] -- COMMAND` and --from-trace: the options the capture uses (--batch / --seq
// only when given: they are the value for {batch} / {seq}).
Result<backends::ScriptOptions> script_options(const CLI::App& app, const Args& a, std::vector<std::string> command) {
  backends::ScriptOptions o;
  auto steps = positive_integer(a.steps, "--steps");
  auto timeout = positive_integer(a.capture_timeout, "--capture-timeout");
  if (!steps) return make_error(steps.error());
  if (!timeout) return make_error(timeout.error());
  o.command = std::move(command), o.from_trace = a.from_trace, o.save_trace = a.save_trace, o.gpu = a.gpu;
  if (!a.gpu_memory.empty()) {
    auto bytes = parse_memory_size(a.gpu_memory);
    if (!bytes) return make_error("--gpu-memory: " + bytes.error());
    o.gpu_memory_bytes = *bytes;
  }
  o.max_batch = a.max_batch, o.max_seq = a.max_seq;
  const char* value_option = a.max_seq ? "--seq" : "--batch";
  if (app.count(value_option)) {
    auto v = positive_integer(a.max_seq ? a.seq : a.batch, value_option);
    if (!v) return make_error(v.error());
    o.value = *v;
  }
  o.steps = *steps, o.timeout_s = *timeout, o.json = a.json, o.show_output = a.show_output;
  o.expandable_segments = a.expandable_segments;
  o.note = [](const std::string& line) { fail("estimate", line, 0); };
  return o;
}

// The script's estimate printed; its exit status (2: the job stopped before a step, 1: does not fit).
int print_script(const backends::ScriptAnswer& answer, bool json) {
  print(json ? capture::render_json(answer.report) : capture::render_text(answer.report, style_for(stdout)));
  switch (answer.verdict) {
    case backends::ScriptVerdict::Partial: return kUsage;
    case backends::ScriptVerdict::DoesNotFit: return kFailure;
    case backends::ScriptVerdict::Fits:
    case backends::ScriptVerdict::NoCard: break;
  }
  return kOk;
}

}  // namespace

int cmd_estimate(const std::vector<std::string>& all) {
  if (all.empty()) {  // the no-argument demo: the articles' 7B example on a 12 GB, a 24 GB and an 80 GB card
    auto text = est::render_quick_start(kDefaultModel, style_for(stdout));
    if (!text) return fail("estimate", text.error());
    return print(*text), kOk;
  }
  const auto dash = std::find(all.begin(), all.end(), "--");
  const std::vector<std::string> args(all.begin(), dash);
  std::vector<std::string> command(dash == all.end() ? dash : dash + 1, all.end());
  Args a;
  CLI::App app("Predict a model's GPU memory for training, LoRA or inference, and whether it fits; or run your own "
               "training script on the CPU with CUDA faked: estimate [options] -- python train.py ARGS.", "estimate");
  add_options(app, a);
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (dash != all.end() || !a.from_trace.empty()) {
    if (dash != all.end() && command.empty()) return fail("estimate", "nothing after --: give the command, e.g. -- python train.py");
    auto o = script_options(app, a, std::move(command));
    if (!o) return fail("estimate", o.error());
    auto answer = backends::estimate_script(*o);
    return answer ? print_script(*answer, a.json) : fail("estimate", answer.error());
  }
  if (a.list_models) return print(est::render_models(a.json)), kOk;
  if (a.list_gpus) return print(est::render_gpus(a.json)), kOk;
  if (!a.config.empty() && !a.model.empty()) return fail("estimate", "give one of --config FILE and --model NAME, not both");
  if (a.config.empty() && a.model.empty()) {
    a.model = kDefaultModel;
    fail("estimate", std::string("no --config or --model: estimating the built-in ") + kDefaultModel + " (see --list-models)", 0);
  }
  auto model = est::load_model(a.config, a.model);
  if (!model) return fail("estimate", model.error());
  auto options = to_options(a);
  if (!options) return fail("estimate", options.error());
  est::FitRequest request{a.gpu, std::nullopt, a.max_batch, a.max_seq, local_gpu, a.config, backends::python_on_path};
  if (!a.gpu_memory.empty()) {
    auto bytes = parse_memory_size(a.gpu_memory);
    if (!bytes) return fail("estimate", "--gpu-memory: " + bytes.error());
    request.gpu_memory_bytes = *bytes;
  }
  auto answer = est::answer(*model, *options, request);
  if (!answer) return fail("estimate", answer.error());
  for (const auto& note : answer->notes) fail("estimate", note, 0);
  if (!a.json) {
    for (const auto& w : answer->estimate.warnings) fail("estimate", "warning: " + w, 0);
    for (const auto& hint : answer->hints) fail("estimate", hint, 0);
  }
  if (a.json) print(est::render_json(*model, *options, answer->estimate, answer->fit));
  else print(est::render_text(*model, *options, answer->estimate, answer->fit, style_for(stdout)));
  return answer->fits ? kOk : kFailure;  // "no": does not fit
}

}  // namespace vramdoc::cli
