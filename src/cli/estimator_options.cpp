#include "cli/estimator_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <tuple>

namespace vramdoc::cli {

namespace est = vramdoc::estimator;

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
  app.add_option("--attention", a.attention,
                 "sdpa | eager | flash (default sdpa; eager for a stand-in of an unknown encoder or encoder-decoder)");
  app.add_flag("--grad-checkpointing", a.checkpointing,
               job ? "the job uses gradient checkpointing" : "gradient checkpointing (non-reentrant, per layer)");
  app.add_option("--task", a.task, "causal-lm | seq-cls | token-cls | mlm | seq2seq | image-cls | speech-seq2seq "
                 "(default: the model's own: causal-lm for decoders, mlm for encoders, seq2seq, image-cls, speech-seq2seq)")
      ->type_name("NAME");
  app.add_option("--image-size", a.image_size, "vision models: pixels per side (default: the config's image_size)")->type_name("N");
  app.add_option("--target-seq", a.target_seq, "encoder-decoders: the decoder's tokens (default 128)")->type_name("N");
}

Result<est::Options> estimator_options(const EstimatorArgs& a) {
  est::Options o;
  auto batch = positive_integer(a.batch, "--batch");
  auto seq = positive_integer(a.seq, "--seq");
  auto mode = est::parse_mode(a.mode);
  auto precision = est::parse_precision(a.precision);
  auto optimizer = est::parse_optimizer(a.optimizer);
  auto attention = est::parse_attention(a.attention.empty() ? "sdpa" : a.attention);
  for (const std::string* e : {batch ? nullptr : &batch.error(), seq ? nullptr : &seq.error(), mode ? nullptr : &mode.error(),
                               precision ? nullptr : &precision.error(), optimizer ? nullptr : &optimizer.error(),
                               attention ? nullptr : &attention.error()}) {
    if (e) return make_error(*e);
  }
  o.batch = *batch, o.seq = *seq, o.mode = *mode, o.precision = *precision, o.optimizer = *optimizer, o.attention = *attention;
  o.attention_given = !a.attention.empty();
  o.grad_checkpointing = a.checkpointing;
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

Result<std::optional<est::JobModel>> read_job(const EstimatorArgs& a) {
  if (a.config.empty() && a.model.empty()) return std::optional<est::JobModel>{};
  if (!a.config.empty() && !a.model.empty()) return make_error("give one of --config FILE and --model PRESET, not both");
  if (a.batch.empty() || a.seq.empty()) {
    return make_error(std::string("quantifying the remedies needs the job's ") +
                      (a.batch.empty() && a.seq.empty() ? "--batch and --seq" : a.batch.empty() ? "--batch" : "--seq"));
  }
  auto options = estimator_options(a);
  if (!options) return make_error(options.error());
  auto model = est::load_model(a.config, a.model);
  if (!model) return make_error(model.error());
  if (auto e = est::estimate(*model, *options); !e) return make_error(e.error() + (a.config.empty() ? "" : " (" + a.config + ")"));
  return std::optional<est::JobModel>{est::JobModel{std::move(*model), *options}};
}

}  // namespace vramdoc::cli
