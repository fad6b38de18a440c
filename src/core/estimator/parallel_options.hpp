// How a training job spreads over GPUs, beyond Options' gpus / zero_stage / tensor_parallel:
// the data-parallel wrapper and its buffers, FSDP's sharding choices, DeepSpeed ZeRO's bucket
// sizes, NCCL's buffer size. Defaults are each library's own. See docs/estimator.md, "Several GPUs".
#pragma once
#include <cstdint>

#include "core/units.hpp"

namespace vramdoc::estimator {

// The wrapper that replicates or shards the model over the data-parallel ranks.
enum class DataParallel {
  Ddp,   // torch DistributedDataParallel: whole replicas, gradient buckets
  Fsdp,  // torch FSDP (fully_shard = version 2, FullyShardedDataParallel = version 1)
  Zero,  // DeepSpeed ZeRO stage 1-3 (Options::zero_stage)
};

// Where FSDP / ZeRO keep what they offload.
enum class Offload {
  None,
  Optimizer,  // ZeRO offload_optimizer: fp32 master weights, optimizer state and its step on the CPU
  All,        // FSDP CPUOffload / ZeRO-3 offload_param too: sharded weights and gradients on the CPU
};

inline constexpr std::uint64_t kEveryRank = ~std::uint64_t{0};

struct ParallelOptions {
  DataParallel data = DataParallel::Ddp;  // used when gpus / tensor_parallel > 1
  // DDP (torch/nn/parallel/distributed.py) gradient_as_bucket_view. bucket_cap_mb only splits the
  // buckets' total (every trainable gradient) into more or fewer tensors.
  bool ddp_bucket_view = false;
  // FSDP: 2 = fully_shard per decoder layer, 1 = FullyShardedDataParallel wrapping each layer.
  int fsdp_version = 2;
  bool reshard_after_forward = true;  // false: FSDP2 reshard_after_forward=False / FSDP1 SHARD_GRAD_OP
  std::uint64_t shard_group = 0;      // 0: shard over all data-parallel ranks; else HYBRID_SHARD / HSDP group size
  Offload offload = Offload::None;
  // DeepSpeed ZeRO (deepspeed/runtime/zero/config.py), in elements. allgather_bucket_size and
  // stage3_prefetch_bucket_size bound messages and prefetching inside these, not the totals.
  std::uint64_t zero_reduce_bucket = 500'000'000;
  std::uint64_t zero_max_live_parameters = 1'000'000'000;  // stage3_max_live_parameters
  std::uint64_t zero_persistence_threshold = 100'000;    // stage3_param_persistence_threshold
  // NCCL_BUFFSIZE: the Simple protocol's buffer per channel and peer.
  std::uint64_t nccl_buffsize = 4 * MiB;
  // Whose numbers: one rank (0 .. gpus-1), or kEveryRank: the rank that needs the most. Ranks differ
  // only where FSDP1's FlatParameter cuts parameters unevenly (the optimizer's state per part).
  std::uint64_t rank = kEveryRank;
};

}  // namespace vramdoc::estimator
