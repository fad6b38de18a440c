// What `vramdoc estimate` answers: the estimate, the card it is fitted on (--gpu-memory, else
// --gpu, else the local GPU 0 when the driver shows one), --max-batch / --max-seq on that card,
// and whether the answer is "no" (does not fit: exit 1).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/estimator/estimate.hpp"
#include "core/estimator/render.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// The local GPU, as the driver reports it.
struct LocalGpu {
  std::string name;  // "NVIDIA H200", or empty
  std::uint64_t total_bytes = 0;
};

// What estimate is asked besides the model and the options.
struct FitRequest {
  std::string gpu;                    // --gpu: a card of the table, by any of its names
  std::optional<std::uint64_t> gpu_memory_bytes;  // --gpu-memory
  bool max_batch = false, max_seq = false;
  // The local GPU 0, asked only when neither --gpu nor --gpu-memory is given (empty: none).
  std::function<std::optional<LocalGpu>()> local_gpu;
  std::string config;  // --config, named when the model cannot be estimated
  // Whether Python is here, asked only for a model the estimator knows no family of: the script
  // capture (`estimate -- python train.py`) would measure it.
  std::function<bool()> python_available;
};

struct Answer {
  Estimate estimate;
  FitReport fit;
  std::vector<std::string> notes;  // for stderr: an AMD card's reach
  std::vector<std::string> hints;  // for stderr beside the text (not with --json): what would measure better
  bool fits = true;                // false: the answer is "no" (a target was given and it does not fit)
};

// The estimate of `model` with `options`, fitted as `request` asks; errors name the option (an
// unknown --gpu, --max-batch without a card).
Result<Answer> answer(const ModelConfig& model, const Options& options, const FitRequest& request);

// `estimate --list-models`: the built-in presets as a table, or the JSON document vramdoc.models/1.
std::string render_models(bool json);
// `estimate --list-gpus`: the card table, or the JSON document vramdoc.gpus/1.
std::string render_gpus(bool json);
// `vramdoc estimate` without arguments: `model` (the articles' 7B) in four scenarios on a 12, a 24
// and an 80 GB card, with the margin and the command that tells more.

}  // namespace vramdoc::estimator
