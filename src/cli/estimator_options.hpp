// The model and estimator options estimate, run, analyze and probe share (EstimatorArgs), each
// parsed here once into estimator::Options; the model itself is loaded by core/estimator/model_source.
#pragma once
#include <optional>
#include <string>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_source.hpp"
#include "core/result.hpp"

namespace CLI {
class App;
}

namespace vramdoc::cli {

// A positive decimal integer below 10^19; the error names `option`.
Result<std::uint64_t> positive_integer(const std::string& text, const std::string& option);

// The model and the estimator's settings, with one set of names and defaults for every command
// that sizes a model: estimate (the model to size), run and analyze (the job's model, which
// quantifies the remedies), probe (the job's model, whose estimate guides the first trials).
// The model estimate sizes when given neither --config nor --model (and the no-argument demo's).
constexpr const char* kDefaultModel = "llama-2-7b";

struct EstimatorArgs {
  std::string config, model;  // a config.json / model directory, or a preset
  std::string batch, seq;     // empty: not given (estimate's defaults: see add_estimator_options)
  std::string mode = "train", precision = "bf16", optimizer = "adamw", attention;  // attention empty: not given
  bool checkpointing = false;
  std::string task, image_size, target_seq;  // empty: the model's own task, the config's image size, 128 target tokens
};

// Who asks: estimate sizes a model (--batch 1 and --seq 1024 unless given); run, analyze and
// probe describe the job (then --batch and --seq are required with --config / --model).
enum class EstimatorUse { Estimate, Job };

// Adds --config, --model, --batch, --seq, --mode, --precision, --optimizer, --attention,
// --grad-checkpointing, --task, --image-size and --target-seq, worded for `use`.
void add_estimator_options(CLI::App& app, EstimatorArgs& a, EstimatorUse use);

// --batch, --seq, --mode, --precision, --optimizer, --attention, --grad-checkpointing, --task,
// --image-size and --target-seq as the estimator's options (the rest default); errors name the option.
Result<estimator::Options> estimator_options(const EstimatorArgs& a);

// The job of --config/--model, empty without them. Errors (a missing or malformed config, a
// missing --batch / --seq, a bad name) are for exit 2; run checks them before starting the job.
Result<std::optional<estimator::JobModel>> read_job(const EstimatorArgs& a);

}  // namespace vramdoc::cli
