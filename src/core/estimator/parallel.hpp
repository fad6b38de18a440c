// One rank's share of the model's states under DDP, FSDP, DeepSpeed ZeRO and tensor parallelism:
// which terms are whole, which are divided, and the buffers each wrapper adds. Pure arithmetic;
// every rule and its source is in docs/estimator.md, "Several GPUs".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/estimator/estimate.hpp"

namespace vramdoc::estimator {

// One model replica after tensor parallelism (what a single GPU of the TP group would hold).
struct ReplicaStates {
  std::uint64_t weights = 0;        // bytes, every weight in its storage dtype
  std::uint64_t grads = 0;          // bytes, gradients of the trainable weights
  std::uint64_t state = 0;          // bytes, optimizer state
  std::uint64_t temps = 0;          // bytes, the optimizer step's temporaries
  std::uint64_t weight_width = 2;   // bytes per weight element as stored
  std::uint64_t compute_width = 2;  // bytes per weight element as FSDP gathers it (mixed precision: 2)
  std::uint64_t reduce_width = 2;   // bytes per gradient element as FSDP reduce-scatters it
  std::uint64_t layers = 1;
  std::uint64_t layer_params = 0;       // elements of one decoder layer: an FSDP unit, a ZeRO-3 module
  std::uint64_t root_params = 0;        // elements outside the layers (embeddings, final norm, lm_head)
  std::uint64_t head_params = 0;        // elements of lm_head (tied or not): its gradient comes first
  std::uint64_t trainable_params = 0;   // elements with gradients and optimizer state
  std::uint64_t persistent_params = 0;  // ZeRO-3: elements in tensors below the persistence threshold
};

// Where in a training step the terms are taken.
enum class StepPoint {
  BackwardStart,  // the loss gradient: activations all alive, no gradients yet
  BackwardLayer,  // inside the backward of a decoder layer: its weights gathered, gradients so far
  OptimizerStep,  // gradients complete, the optimizer's temporaries
};

// The data-parallel wrapper in effect: ZeRO when zero_stage > 0, else parallel.data.
DataParallel wrapper(const Options& o);
// gpus / tensor_parallel: the ranks that hold (shards of) the same TP slice.
std::uint64_t data_parallel_degree(const Options& o);
// The ranks FSDP / ZeRO divide a state by (FSDP's shard group under hybrid sharding), 1 under DDP.
std::uint64_t shard_degree(const Options& o);
// True when FSDP's mixed precision applies (--fsdp with amp-bf16 / amp-fp16): sharded fp32
// weights, 16-bit gathered weights and compute (no autocast), fp32 gradient reduction.
bool fsdp_mixed_precision(const Options& o);
// A message for settings that contradict each other or the model; nullopt when consistent.
std::optional<std::string> parallel_error(const ModelConfig& m, const Options& o);

// The model-state terms one rank holds at `point`: weights, optimizer state (and temporaries at
// the step), gradients (`grads_so_far` bytes of the replica's in BackwardLayer), wrapper buffers
// and gathered weights. Each term says in `sharding` how it is split across ranks.
std::vector<Term> rank_state_terms(const ReplicaStates& r, const Options& o, StepPoint point,
                                   std::uint64_t grads_so_far);

// The NCCL communicators one rank joins (data-parallel, tensor-parallel, hybrid groups): with
// other ranks (`peers`), and of this rank alone (`single`: hybrid sharding's replicate group when
// one shard group spans every data-parallel rank).
struct NcclGroups {
  std::uint64_t peers = 0, single = 0;
  std::uint64_t total() const { return peers + single; }
};
NcclGroups nccl_communicators(const Options& o);

}  // namespace vramdoc::estimator
