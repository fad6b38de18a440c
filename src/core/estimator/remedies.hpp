// The remedies of a job that does not fit (or, with no card named, what would lower its peak),
// each one the job's Options with one thing changed, estimated for this job and ranked by what it
// costs the user: keeping the effective batch with gradient accumulation first, a bigger card last.
// A remedy that does not apply to the job (no ZeRO for inference, no smaller batch at batch 1, no
// bf16 for a bf16 job) or that saves nothing is never listed.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/estimator/estimate.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

struct Remedy {
  std::string name;    // for people: "gradient checkpointing"
  std::string option;  // what to pass to vramdoc (and change in the job): "--grad-checkpointing"
  int cost = 0;        // 1 costs the user least (the rank; several remedies may share one)
  Options options;     // the job as changed
  std::uint64_t process_bytes = 0;  // the estimate of the changed job at options.batch
  std::int64_t saving_bytes = 0;    // the job's estimate minus process_bytes
  std::optional<bool> fits;         // options.batch on the target card (empty: no target)
  // With a target: the largest batch the remedy allows (the --max-batch question), or for a
  // training job that does not fit, the largest divisor of its batch that fits, run with
  // options.batch / that many gradient-accumulation steps to keep the effective batch.
  std::optional<std::uint64_t> batch;
  std::uint64_t batch_process_bytes = 0;
  std::uint64_t accumulation_steps = 1;  // gradient-accumulation steps at `batch` (1: none)
  std::string card;                      // the bigger-card remedy: the card's name
  std::uint64_t card_bytes = 0;          // and its memory
};

struct RemedyRequest {
  std::optional<std::uint64_t> usable_bytes;  // the target card's memory (empty: none named)
  bool max_batch = false;                     // the question is the largest batch, not this batch
  bool even_if_fits = false;                  // list them when the job fits too (a measured job that failed)
};

// Every remedy that applies to `job` and changes its estimate, evaluated, cheapest first. With a
// target and no --max-batch, only when the job does not fit there. Errors: the job's own estimate.
Result<std::vector<Remedy>> remedies(const ModelConfig& model, const Options& job, const RemedyRequest& request);

// The result of one remedy in a few words: "batch 2 fits, 21.30 of 24.00 GiB",
// "fits, 11.20 of 12.00 GiB", "does not fit, 30.10 of 24.00 GiB", "19.43 GiB (saves 5.04 GiB)".
std::string remedy_result(const Remedy& r, const RemedyRequest& request);

}  // namespace vramdoc::estimator
