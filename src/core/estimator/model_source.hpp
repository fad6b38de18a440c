// Where a model comes from: a Hugging Face config.json, a model directory (config.json and the
// *.safetensors headers, never the weights), a model id in the local Hugging Face cache
// (hf_cache.hpp), or a built-in preset. Shared by estimate, run, analyze and probe.
#pragma once
#include <string>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// The largest config.json read (16 MiB).
inline constexpr std::uint64_t kMaxConfigBytes = 16ULL << 20;

// A preset (`model` set) or a config.json / model directory (`config`; "-": standard input); an
// "org/name" (with --model, or with --config when no such file exists) from the local HF cache.
// Errors name the file.
Result<ModelConfig> load_model(const std::string& config, const std::string& model);

// A job's model and the estimator's settings for it (run, analyze, probe: --config / --model
// with --batch, --seq, ...): quantifies the remedies, guides probe's first trials.
struct JobModel {
  ModelConfig model;
  Options options;
};

}  // namespace vramdoc::estimator
