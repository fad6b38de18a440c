// One rank's plan on several GPUs: its tensors as the wrapper keeps them (TP-split, FSDP2 sharded
// per parameter, FSDP1 one flat shard per unit with the optimizer's parts per rank, DDP's buckets)
// and what the wrapper gathers and reduces. rank_sequence.cpp replays a step with it.
#pragma once
#include <cstdint>
#include <vector>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/forward_ops.hpp"
#include "core/estimator/parallel.hpp"

namespace vramdoc::estimator::detail {

// One rank's tensors, in bytes: weights per tensor as the rank stores them (TP-split, FSDP2
// sharded per parameter, FSDP1 one flat shard per unit), what the wrapper gathers and reduces.
struct RankPlan {
  std::vector<u64> embed, layer, head;              // stored weights (one layer's in `layer`)
  std::vector<u64> opt_embed, opt_layer, opt_head;  // the optimizer's tensors (FSDP1: the rank's parts)
  std::vector<u64> whole_layer, whole_root;         // FSDP1: a unit's parameters as materialised
  std::vector<u64> root_tensors;                    // FSDP2: the root's parameters as gathered (compute width)
  std::vector<u64> embed_grads, layer_grads, head_grads;  // gradients as autograd makes them
  std::size_t lm_head_at = SIZE_MAX;                // lm_head's in head_grads (SIZE_MAX: tied)
  std::vector<u64> layer_casts;                     // autocast 16-bit copies a layer makes at its start (router, experts)
  std::vector<bool> layer_grad_casts;               // per layer gradient: arrives through a 16-bit autocast copy
  u64 lm_head_cast = 0;
  std::vector<LayerKind> kinds;
  u64 residual = 0, logits_act = 0, logits_fp32 = 0, states_per_tensor = 0;
  LayerGrads backward;                              // what a layer's backward makes
  OuterGrads outer;                                 // the head's and the embeddings' 
  bool foreach_temporaries = false, checkpointing = false;
  DataParallel wrapper = DataParallel::Ddp;
  bool sharded = false, fsdp1 = false, mixed = false, reshard = true, bucket_view = false;
  u64 shards = 1;
  u64 unit = 0, root = 0;                   // a layer / the root gathered, compute width
  u64 unit_rs_in = 0, unit_rs_out = 0, root_rs_in = 0, root_rs_out = 0;
  // DDP (PyTorch 2.11, traces of 2026-11-30-c): the constructor broadcasts the weights in
  // coalesced chunks (`sync_chunks`, each freed again) and holds every bucket in one flat tensor
  // (`buckets_total`); the second forward rebuilds them as one tensor per bucket (`buckets`), filled
  // in gradient order (the reverse of model.parameters()), the first bucket closed at 1 MiB, the
  // others at bucket_cap_mb (a parameter above the cap is a bucket of its own).
  u64 buckets_total = 0;
  std::vector<u64> buckets, sync_chunks;
};

// The plan of data-parallel rank `rank` (it matters only under FSDP1).
RankPlan rank_plan(const Run& r, u64 rank);

}  // namespace vramdoc::estimator::detail
