// vramdoc estimate: parse options, load the model (file, directory or preset), call the
// estimator, print JSON or a table. All arithmetic lives in core/estimator.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "backends/nvml.hpp"
#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/parallel_args.hpp"
#include "core/estimator/fit.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/render.hpp"
#include "core/table.hpp"
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
};

Result<est::Options> to_options(const Args& a) {
  est::Options o;
  auto mode = est::parse_mode(a.mode);
  auto precision = est::parse_precision(a.precision);
  auto optimizer = est::parse_optimizer(a.optimizer);
  auto attention = est::parse_attention(a.attention);
  if (!mode) return make_error(mode.error());
  if (!precision) return make_error(precision.error());
  if (!optimizer) return make_error(optimizer.error());
  if (!attention) return make_error(attention.error());
  o.mode = *mode, o.precision = *precision, o.optimizer = *optimizer, o.attention = *attention;
  for (auto [text, option, field] : {std::tuple{&a.batch, "--batch", &o.batch}, std::tuple{&a.seq, "--seq", &o.seq},
                                     std::tuple{&a.lora_rank, "--lora-rank", &o.lora_rank}}) {
    auto v = positive_integer(*text, option);
    if (!v) return make_error(v.error());
    *field = *v;
  }
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
  o.grad_checkpointing = a.checkpointing;
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

std::string list_models() {
  TextTable t({"name", "what"});
  for (const auto& p : est::presets()) t.add_row({std::string(p.name), std::string(p.description)});
  return t.render();
}

std::string list_gpus() {
  TextTable t({"card", "usable GiB"});
  for (const auto& c : est::gpu_cards()) t.add_row({std::string(c.name), format_gib(c.usable_bytes)});
  return t.render();
}

// The no-argument demo: the articles' 7B example on a 12 GB, a 24 GB and an 80 GB card.
int run_default() {
  auto model = est::preset_config("llama-2-7b");
  std::vector<est::Scenario> scenarios;
  est::Options full;
  full.precision = est::Precision::AmpBf16;
  scenarios.push_back({"full fine-tune (amp-bf16, AdamW)", full});
  full.precision = est::Precision::Bf16;
  scenarios.push_back({"full fine-tune (bf16, AdamW)", full});
  est::Options lora = full;
  lora.mode = est::Mode::Lora;
  scenarios.push_back({"LoRA r=16 q,v (bf16 base)", lora});
  est::Options infer = full;
  infer.mode = est::Mode::Infer;
  scenarios.push_back({"inference (bf16)", infer});
  std::vector<est::GpuCard> cards = {*est::find_gpu("RTX 3060 12GB"), *est::find_gpu("RTX 4090"),
                                     *est::find_gpu("A100 80GB")};
  print("vramdoc estimate: will a 7B model fit? (" + model->name + ", batch 1; try --help for your own model)\n\n" +
        est::render_comparison(*model, scenarios, cards) +
        "\n'fits' keeps a safety margin of " + std::to_string(est::kFitMarginPercent) +
        " %. Details: vramdoc estimate --model llama-2-7b --mode lora --gpu 'RTX 4090'\n");
  return kOk;
}

// Without --gpu / --gpu-memory, the first local GPU is the target, when the driver shows one.
void fit_local_gpu(est::FitReport& fit) {
  auto nvml = backends::Nvml::open();
  if (!nvml || (*nvml)->device_count() == 0) return;
  auto memory = (*nvml)->memory(0);
  if (!memory || !memory->total_bytes) return;
  auto info = (*nvml)->static_info(0);
  fit.target_name = "local GPU 0" + (info && info->name ? ": " + *info->name : std::string());
  fit.usable_bytes = memory->total_bytes;
}

}  // namespace

int cmd_estimate(const std::vector<std::string>& args) {
  if (args.empty()) return run_default();
  Args a;
  CLI::App app("Predict a model's GPU memory for training, LoRA or inference, and whether it fits.", "estimate");
  add_estimator_options(app, a, EstimatorUse::Estimate);
  app.add_flag("--list-models", a.list_models, "list the built-in models");
  app.add_flag("--list-gpus", a.list_gpus, "list the GPU cards --gpu knows");
  app.add_option("--lora-rank", a.lora_rank, "LoRA rank r")->capture_default_str();
  app.add_option("--lora-alpha", a.lora_alpha, "LoRA alpha (scales the update; no memory effect)");
  app.add_option("--lora-targets", a.lora_targets, "comma-separated module names (default: PEFT's for the model)");
  app.add_option("--kv-dtype", a.kv_dtype, "KV cache dtype for inference: fp32 | bf16 | fp16 | fp8 | int8");
  app.add_option("--logits", a.logits, "all (transformers' default) | last")->capture_default_str();
  add_parallel_options(app, a.parallel);
  app.add_option("--gpu", a.gpu, "a card to fit on, e.g. 'RTX 4090', H100 (see --list-gpus); default: the local GPU 0 when present");
  app.add_option("--gpu-memory", a.gpu_memory, "memory to fit in, e.g. 24GiB");
  app.add_flag("--max-batch", a.max_batch, "find the largest batch that fits (needs --gpu or --gpu-memory)");
  app.add_flag("--max-seq", a.max_seq, "find the largest sequence length that fits");
  app.add_option("--quant", a.quant, "inference with weights quantised on load: none | int8 | int4 (bitsandbytes) | fp8")
      ->capture_default_str();
  app.add_option("--new-tokens", a.new_tokens, "inference: tokens generate() adds after the prompt (KV cache grows)");
  app.add_flag("--expandable-segments", a.expandable_segments, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  app.add_flag("--json", a.json, "one JSON object instead of the table");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (a.list_models) return print(list_models()), kOk;
  if (a.list_gpus) return print(list_gpus()), kOk;
  if (a.config.empty() == a.model.empty()) return fail("estimate", "give exactly one of --config FILE and --model NAME");
  auto model = load_model(a.config, a.model);
  if (!model) return fail("estimate", model.error());
  auto options = to_options(a);
  if (!options) return fail("estimate", options.error());
  auto e = est::estimate(*model, *options);
  if (!e) return fail("estimate", e.error() + (a.config.empty() ? "" : " (" + a.config + ")"));
  est::FitReport fit;
  fit.fits_on = est::cards_that_fit(*e);
  if (!a.gpu.empty()) {
    auto card = est::find_gpu(a.gpu);
    if (!card) return fail("estimate", "unknown --gpu '" + a.gpu + "' (see --list-gpus, or give --gpu-memory)");
    fit.target_name = std::string(card->name), fit.usable_bytes = card->usable_bytes;
  }
  if (!a.gpu_memory.empty()) {
    auto bytes = parse_size(a.gpu_memory);
    if (!bytes) return fail("estimate", "--gpu-memory: " + bytes.error());
    fit.target_name = format_gib(*bytes) + " GiB", fit.usable_bytes = *bytes;
  }
  if (!fit.usable_bytes) fit_local_gpu(fit);
  if ((a.max_batch || a.max_seq) && !fit.usable_bytes)
    return fail("estimate", "--max-batch / --max-seq need --gpu or --gpu-memory (no local GPU was found)");
  if (a.max_batch) {
    auto r = est::max_batch(*model, *options, *fit.usable_bytes);
    if (!r) return fail("estimate", r.error());
    fit.max_batch = *r;
  }
  if (a.max_seq) {
    auto r = est::max_seq(*model, *options, *fit.usable_bytes);
    if (!r) return fail("estimate", r.error());
    fit.max_seq = *r;
  }
  if (!a.json) {
    for (const auto& w : e->warnings) std::fprintf(stderr, "vramdoc estimate: warning: %s\n", w.c_str());
  }
  print(a.json ? est::render_json(*model, *options, *e, fit) : est::render_text(*model, *options, *e, fit));
  return kOk;
}

}  // namespace vramdoc::cli
