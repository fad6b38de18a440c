// estimate's options for several GPUs: --gpus, --tp, the data-parallel wrapper (DDP, --fsdp,
// --zero) and its settings, NCCL's buffer size. Parsed into estimator::Options; errors for exit 2.
#pragma once
#include <string>

#include "core/estimator/estimate.hpp"
#include "core/result.hpp"

namespace CLI {
class App;
}

namespace vramdoc::cli {

struct ParallelArgs {
  std::string gpus, tp = "1", fsdp_version = "2", shard_group, offload = "none", nccl_buffsize = "4MiB", rank;
  std::string zero_reduce_bucket, zero_max_live, zero_persistence;
  int zero = 0;
  bool fsdp = false, no_reshard = false, ddp_bucket_view = false;
};

// Adds --gpus, --tp, --fsdp, --fsdp-version, --no-reshard, --shard-group, --zero and its bucket
// options, --offload, --ddp-bucket-view, --nccl-buffsize, --rank.
void add_parallel_options(CLI::App& app, ParallelArgs& a);
// Sets o.gpus, o.tensor_parallel, o.zero_stage and o.parallel; errors name the option.
Result<bool> apply_parallel(const ParallelArgs& a, estimator::Options& o);

}  // namespace vramdoc::cli
