// vramdoc estimate: parse options, load the model (file, directory or preset), call the
// estimator, print JSON or a table. All arithmetic lives in core/estimator.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/nvml.hpp"
#include "cli/command.hpp"
#include "cli/estimate_script.hpp"
#include "cli/model_input.hpp"
#include "cli/parallel_args.hpp"
#include "cli/style.hpp"
#include "core/estimator/fit.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/quick_start.hpp"
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
  std::string task, image_size, target_seq;  // empty: the model's own task, the config's image size, 128 target tokens
  bool expandable_segments = false;
  ParallelArgs parallel;
  double lora_alpha = 32;
  bool json = false, list_models = false, list_gpus = false;
  bool max_batch = false, max_seq = false;
  std::string steps = "3", capture_timeout = "600", from_trace, save_trace;  // estimate -- python train.py
  bool show_output = false;
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
  if (!a.task.empty()) {
    auto task = est::parse_task(a.task);
    if (!task) return make_error(task.error());
    o.task = *task;
  }
  for (auto [text, option, field] : {std::tuple{&a.image_size, "--image-size", &o.image_size},
                                     std::tuple{&a.target_seq, "--target-seq", &o.target_seq}}) {
    if (text->empty()) continue;
    auto v = positive_integer(*text, option);
    if (!v) return make_error(v.error());
    *field = *v;
  }
  return o;
}

std::string list_models(bool json) {
  TextTable t({"name", "what"});
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const auto& p : est::presets()) {
    t.add_row({std::string(p.name), std::string(p.description)});
    models.push_back({{"name", p.name}, {"description", p.description}});
  }
  if (!json) return t.render();
  return json_document("vramdoc.models/1", nlohmann::ordered_json{{"models", models}}.dump(2) + "\n");
}

std::string list_gpus(bool json) {
  TextTable t({"card", "nvidia-smi name", "total", "note"}, {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Left});
  nlohmann::ordered_json cards = nlohmann::ordered_json::array();
  for (const auto& c : est::gpu_cards()) {
    const bool amd = c.vendor == est::Vendor::Amd;
    const std::string note = std::string(amd ? "AMD: estimate only" : "") + (c.derived ? "derived (docs/cli.md)" : "");
    t.add_row({std::string(c.name), std::string(c.smi_name), format_bytes(c.usable_bytes), note});
    cards.push_back({{"name", c.name}, {"smi_name", c.smi_name}, {"vendor", amd ? "amd" : "nvidia"},
                     {"total_bytes", c.usable_bytes}, {"derived", c.derived}});
  }
  if (!json) return t.render();
  return json_document("vramdoc.gpus/1", nlohmann::ordered_json{{"gpus", cards}}.dump(2) + "\n");
}

// An AMD card: the estimate holds (PyTorch's caching allocator is the same on ROCm), the rest of vramdoc does not run there.
void note_vendor(const est::GpuCard& card) {
  if (card.vendor != est::Vendor::Amd) return;
  std::fprintf(stderr, "vramdoc estimate: note: %.*s is an AMD GPU: this estimate holds for PyTorch on ROCm, but "
               "vramdoc's CUDA tools (info, bench, watch, run, probe) do not run there\n",
               static_cast<int>(card.name.size()), card.name.data());
}

// True when a python3 (or python) executable is on PATH: the script capture can run here.
bool python_on_path() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : {"python3", "python"}) {
      std::error_code ec;
      if (!dir.empty() && std::filesystem::is_regular_file(std::filesystem::path(dir) / name, ec)) return true;
    }
  }
  return false;
}

// The no-argument demo: the articles' 7B example on a 12 GB, a 24 GB and an 80 GB card.
int run_default() {
  auto text = est::render_quick_start(kDefaultModel);
  if (!text) return fail("estimate", text.error());
  print(highlight(*text, style_for(stdout)));
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
  app.add_option("--task", a.task, "causal-lm | seq-cls | token-cls | mlm | seq2seq | image-cls | speech-seq2seq "
                 "(default: the model's own: causal-lm for decoders, mlm for encoders, seq2seq, image-cls, speech-seq2seq)")
      ->type_name("NAME");
  app.add_option("--image-size", a.image_size, "vision models: pixels per side (default: the config's image_size)")->type_name("N");
  app.add_option("--target-seq", a.target_seq, "encoder-decoders: the decoder's tokens (default 128)")->type_name("N");
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
// only when given: they are values for {batch} / {seq}).
Result<ScriptOptions> script_options(const CLI::App& app, const Args& a, std::vector<std::string> command) {
  ScriptOptions o;
  auto steps = positive_integer(a.steps, "--steps");
  auto timeout = positive_integer(a.capture_timeout, "--capture-timeout");
  if (!steps) return make_error(steps.error());
  if (!timeout) return make_error(timeout.error());
  o.command = std::move(command), o.from_trace = a.from_trace, o.save_trace = a.save_trace, o.gpu = a.gpu, o.gpu_memory = a.gpu_memory;
  o.batch = app.count("--batch") ? a.batch : "", o.seq = app.count("--seq") ? a.seq : "";
  o.max_batch = a.max_batch, o.max_seq = a.max_seq;
  o.steps = *steps, o.timeout_s = *timeout, o.json = a.json, o.show_output = a.show_output;
  o.expandable_segments = a.expandable_segments;
  return o;
}

// The card to fit on: --gpu-memory, else --gpu, else the local GPU 0 (none: fit.usable_bytes stays empty).
Result<bool> choose_target(const Args& a, est::FitReport& fit) {
  if (!a.gpu.empty()) {
    auto card = est::find_gpu(a.gpu);
    if (!card) return make_error("--gpu: " + card.error());
    fit.target_name = std::string(card->name), fit.usable_bytes = card->usable_bytes;
    note_vendor(*card);
  }
  if (!a.gpu_memory.empty()) {
    auto bytes = parse_memory_size(a.gpu_memory);
    if (!bytes) return make_error("--gpu-memory: " + bytes.error());
    fit.target_name = format_bytes(*bytes), fit.usable_bytes = *bytes;
  }
  if (!fit.usable_bytes) fit_local_gpu(fit);
  if ((a.max_batch || a.max_seq) && !fit.usable_bytes)
    return make_error("--max-batch / --max-seq need --gpu or --gpu-memory (no local GPU was found)");
  return true;
}

// --max-batch and --max-seq on the chosen target.
Result<bool> search_limits(const Args& a, const est::ModelConfig& model, const est::Options& options, est::FitReport& fit) {
  if (a.max_batch) {
    auto r = est::max_batch(model, options, *fit.usable_bytes);
    if (!r) return make_error(r.error());
    fit.max_batch = *r;
  }
  if (a.max_seq) {
    auto r = est::max_seq(model, options, *fit.usable_bytes);
    if (!r) return make_error(r.error());
    fit.max_seq = *r;
  }
  return true;
}

}  // namespace

int cmd_estimate(const std::vector<std::string>& all) {
  if (all.empty()) return run_default();
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
    return o ? estimate_script(*o) : fail("estimate", o.error());
  }
  if (a.list_models) return print(list_models(a.json)), kOk;
  if (a.list_gpus) return print(list_gpus(a.json)), kOk;
  if (!a.config.empty() && !a.model.empty()) return fail("estimate", "give one of --config FILE and --model NAME, not both");
  if (a.config.empty() && a.model.empty()) {
    a.model = kDefaultModel;
    std::fprintf(stderr, "vramdoc estimate: no --config or --model: estimating the built-in %s (see --list-models)\n", kDefaultModel);
  }
  auto model = load_model(a.config, a.model);
  if (!model) return fail("estimate", model.error());
  auto options = to_options(a);
  if (!options) return fail("estimate", options.error());
  auto e = est::estimate(*model, *options);
  if (!e) return fail("estimate", e.error() + (a.config.empty() ? "" : " (" + a.config + ")"));
  est::FitReport fit;
  fit.fits_on = est::cards_that_fit(*e);
  if (auto t = choose_target(a, fit); !t) return fail("estimate", t.error());
  if (auto s = search_limits(a, *model, *options, fit); !s) return fail("estimate", s.error());
  if (!a.json) {
    for (const auto& w : e->warnings) std::fprintf(stderr, "vramdoc estimate: warning: %s\n", w.c_str());
    if (model->family == est::Family::Generic && python_on_path()) {
      std::fprintf(stderr, "vramdoc estimate: note: Python is here: measure the job itself on the CPU with "
                           "vramdoc estimate -- python train.py ...\n");
    }
  }
  if (a.json) print(json_document("vramdoc.estimate/1", est::render_json(*model, *options, *e, fit)));
  else print(highlight(est::render_text(*model, *options, *e, fit), style_for(stdout)));
  return fit.usable_bytes && !est::fits(*e, *fit.usable_bytes) ? kFailure : kOk;  // "no": does not fit
}

}  // namespace vramdoc::cli
