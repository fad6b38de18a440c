// Loading a model for the estimator (config.json, model directory, preset) and the job options
// of run and analyze; the arithmetic lives in core/estimator and core/timeline/quantify.
#include "cli/model_input.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>

#include "cli/hf_cache.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/safetensors.hpp"
#include "core/input_file.hpp"
#include "core/timeline/quantify.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace {

namespace est = vramdoc::estimator;
namespace fs = std::filesystem;

constexpr std::uint64_t kMaxConfigBytes = 16 * MiB;

// Every tensor of every *.safetensors header in `dir` (headers only, never the weights).
Result<std::vector<est::TensorInfo>> checkpoint_tensors(const fs::path& dir) {
  std::vector<est::TensorInfo> all;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".safetensors") continue;
    const std::string source = entry.path().string();
    auto head = read_file_head(source, 8);
    if (!head) return make_error(head.error());
    auto length = est::safetensors_header_length(*head, source);
    if (!length) return make_error(length.error());
    auto header = read_file_head(source, 8 + *length);
    if (!header) return make_error(header.error());
    std::error_code size_error;
    const std::uint64_t size = fs::file_size(entry.path(), size_error);
    auto tensors = est::parse_safetensors_header(*header, source, size_error ? std::nullopt : std::optional(size - std::min(size, 8 + *length)));
    if (!tensors) return make_error(tensors.error());
    all.insert(all.end(), tensors->begin(), tensors->end());
  }
  return all;
}

// The checkpoint's tensors on the model: sizes for an unknown family, stored bytes of quantised
// weights for every family, and a warning when config.json and the headers disagree.
void attach_checkpoint(est::ModelConfig& model, const std::vector<est::TensorInfo>& tensors) {
  std::uint64_t params = 0;
  bool quantized = false;
  for (const auto& t : tensors) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n = saturating_mul(n, d);
    params = saturating_add(params, n);
    const bool floating = t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64";
    quantized = quantized || !floating;
    model.header_tensors.push_back({t.name, t.shape, t.bytes, floating});
  }
  est::attach_header_tensors(model);
  if (model.family == est::Family::FromHeaders || quantized || model.quant.method != est::QuantMethod::None) return;
  auto e = est::estimate(model, est::Options{});
  if (e && (e->n_params > params * 101 / 100 || e->n_params < params * 99 / 100)) {
    model.warnings.push_back("config.json implies " + std::to_string(e->n_params) + " parameters but the " +
                             "safetensors headers hold " + std::to_string(params));
  }
}

}  // namespace

Result<est::ModelConfig> load_model(const std::string& config, const std::string& model_name) {
  // "org/name" (with --model, or with --config when no such file exists): the local HF cache.
  const std::string& id = !model_name.empty() ? model_name : config;
  std::error_code ec;
  if (looks_like_model_id(id) && (!model_name.empty() || !fs::exists(config, ec))) {
    auto dir = find_cached_model(id);
    if (!dir) return make_error(dir.error());
    return load_model(*dir, "");
  }
  if (!model_name.empty()) return est::preset_config(model_name);
  fs::path path = config;  // a symlink loop or a missing file: read_input_file below names it
  const bool dir = config != "-" && fs::is_directory(path, ec);
  const std::string file = dir ? (path / "config.json").string() : config;
  auto text = read_input_file(file, kMaxConfigBytes);
  if (!text) return make_error("model config: " + text.error());
  auto model = est::parse_config_json(*text, input_name(file));
  if (!model || !dir) return model;
  auto tensors = checkpoint_tensors(path);
  if (!tensors) return make_error(tensors.error());
  if (!tensors->empty()) attach_checkpoint(*model, *tensors);
  return model;
}


Result<std::uint64_t> positive_integer(const std::string& text, const std::string& option) {
  if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), ::isdigit)) {
    return make_error(option + " must be a positive integer below 10^19, got '" + text + "'");
  }
  const std::uint64_t v = std::stoull(text);
  if (v == 0) return make_error(option + " must be positive, got 0");
  return v;
}

void add_estimator_options(CLI::App& app, EstimatorArgs& a, EstimatorUse use) {
  const bool job = use == EstimatorUse::Job;
  if (!job) {
    if (a.batch.empty()) a.batch = "1";
    if (a.seq.empty()) a.seq = "1024";
  }
  app.add_option("--config", a.config, job ? "the job's model: Hugging Face config.json or model directory (quantifies the remedies)"
                                           : "Hugging Face config.json (- reads standard input), or a model directory (config.json + *.safetensors headers)");
  app.add_option("--model", a.model, job ? "the job's model as a built-in preset (see vramdoc estimate --list-models)"
                                         : std::string("a built-in model (see --list-models), or a model id org/name from the local Hugging Face cache; "
                                                       "without --config or --model: ") + kDefaultModel);
  auto* batch = app.add_option("--batch", a.batch, job ? "with --config/--model: the job's micro-batch per GPU" : "micro-batch per GPU");
  auto* seq = app.add_option("--seq", a.seq, job ? "with --config/--model: the job's sequence length in tokens" : "sequence length in tokens");
  if (!job) batch->capture_default_str(), seq->capture_default_str();
  app.add_option("--mode", a.mode, "train | lora | qlora | infer")->capture_default_str();
  app.add_option("--precision", a.precision, "fp32 | amp-bf16 | amp-fp16 | bf16 | fp16")->capture_default_str();
  app.add_option("--optimizer", a.optimizer, "adamw | adam | sgd | sgd-momentum | adamw-8bit | adafactor")->capture_default_str();
  app.add_option("--attention", a.attention, "sdpa | eager | flash")->capture_default_str();
  app.add_flag("--grad-checkpointing", a.checkpointing,
               job ? "the job uses gradient checkpointing" : "gradient checkpointing (non-reentrant, per layer)");
}

Result<std::optional<JobInput>> read_job(const EstimatorArgs& a) {
  if (a.config.empty() && a.model.empty()) return std::optional<JobInput>{};
  if (!a.config.empty() && !a.model.empty()) return make_error("give one of --config FILE and --model PRESET, not both");
  if (a.batch.empty() || a.seq.empty()) {
    return make_error(std::string("quantifying the remedies needs the job's ") +
                      (a.batch.empty() && a.seq.empty() ? "--batch and --seq" : a.batch.empty() ? "--batch" : "--seq"));
  }
  est::Options o;
  auto batch = positive_integer(a.batch, "--batch");
  auto seq = positive_integer(a.seq, "--seq");
  auto mode = est::parse_mode(a.mode);
  auto precision = est::parse_precision(a.precision);
  auto optimizer = est::parse_optimizer(a.optimizer);
  auto attention = est::parse_attention(a.attention);
  for (const std::string* e : {batch ? nullptr : &batch.error(), seq ? nullptr : &seq.error(), mode ? nullptr : &mode.error(),
                               precision ? nullptr : &precision.error(), optimizer ? nullptr : &optimizer.error(),
                               attention ? nullptr : &attention.error()}) {
    if (e) return make_error(*e);
  }
  o.batch = *batch, o.seq = *seq, o.mode = *mode, o.precision = *precision, o.optimizer = *optimizer, o.attention = *attention;
  o.grad_checkpointing = a.checkpointing;
  auto model = load_model(a.config, a.model);
  if (!model) return make_error(model.error());
  if (auto e = est::estimate(*model, o); !e) return make_error(e.error() + (a.config.empty() ? "" : " (" + a.config + ")"));
  return std::optional<JobInput>{JobInput{std::move(*model), o}};
}

Result<bool> quantify_job(const std::optional<JobInput>& job, const timeline::Timeline& tl, timeline::Diagnosis& d) {
  if (!job) return false;
  auto q = timeline::quantify(tl, d, job->model, job->options);
  if (!q) return make_error(q.error() + " (" + job->model.name + ")");
  d.quantified = std::move(*q);
  timeline::apply_quantified(d);
  return true;
}

}  // namespace vramdoc::cli
