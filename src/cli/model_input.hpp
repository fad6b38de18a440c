// The model and job settings the estimator needs, shared by estimate, run and analyze: loading
// a config.json / model directory / preset, and the job options that quantify a diagnosis.
#pragma once
#include <optional>
#include <string>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/timeline.hpp"

namespace CLI {
class App;
}

namespace vramdoc::cli {

// A preset (`model` set) or a config.json / model directory (`config`); errors name the file.
Result<estimator::ModelConfig> load_model(const std::string& config, const std::string& model);

// A positive decimal integer below 10^19; the error names `option`.
Result<std::uint64_t> positive_integer(const std::string& text, const std::string& option);

// --config/--model and the job's settings, as run and analyze take them (estimate's names and defaults).
struct JobArgs {
  std::string config, model, batch, seq, mode = "train", precision = "bf16", optimizer = "adamw", attention = "sdpa";
  bool checkpointing = false;
};

// Adds --config, --model, --batch, --seq, --mode, --precision, --optimizer, --grad-checkpointing, --attention.
void add_job_options(CLI::App& app, JobArgs& a);
// The four settings every model-sizing command takes: --mode, --precision, --optimizer, --attention.
void add_setting_options(CLI::App& app, std::string& mode, std::string& precision, std::string& optimizer,
                         std::string& attention);

// The model and the estimator's options of a job described on the command line.
struct JobInput {
  estimator::ModelConfig model;
  estimator::Options options;
};

// The job of --config/--model, empty without them. Errors (a missing or malformed config, a
// missing --batch / --seq, a bad name) are for exit 2; run checks them before starting the job.
Result<std::optional<JobInput>> read_job(const JobArgs& a);

// With a job: quantifies the remedies and sets d.quantified (true). Without one: false.
Result<bool> quantify_job(const std::optional<JobInput>& job, const timeline::Timeline& tl, timeline::Diagnosis& d);

}  // namespace vramdoc::cli
