// Per-rank model states: DDP keeps whole replicas plus gradient buckets, FSDP and ZeRO divide by
// the shard group and gather layers on demand, tensor parallelism has already split the replica.
// Sources: torch/nn/parallel/distributed.py + reducer.cpp, torch/distributed/fsdp/_fully_shard/,
// deepspeed/runtime/zero/stage_1_and_2.py + stage3.py; docs/estimator.md walks each rule.
#include "core/estimator/parallel.hpp"

#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// How a term that every data-parallel rank keeps whole is labelled.
std::string whole(const Options& o) {
  if (data_parallel_degree(o) > 1) return o.tensor_parallel > 1 ? "TP slice, on every rank" : "on every rank";
  return o.tensor_parallel > 1 ? "TP slice" : "";
}

std::string divided(const Options& o, u64 by, const char* who) {
  return "1/" + std::to_string(by) + " (" + who + ")" + (o.tensor_parallel > 1 ? " of the TP slice" : "");
}

std::vector<Term> single_terms(const ReplicaStates& r, const Options& o, StepPoint p, u64 so_far) {
  const std::string s = whole(o);
  std::vector<Term> t = {{"weights_bytes", "weights", r.weights, s}};
  if (p == StepPoint::BackwardLayer) t.push_back({"gradients_bytes", "gradients so far", so_far, s});
  if (p == StepPoint::OptimizerStep) t.push_back({"gradients_bytes", "gradients", r.grads, s});
  t.push_back({"optimizer_state_bytes", "optimizer state", r.state, s});
  if (p == StepPoint::OptimizerStep) t.push_back({"optimizer_temporaries_bytes", "optimizer step temporaries", r.temps, s});
  return t;
}

// DDP (reducer.cpp initialize_buckets): one flat bucket tensor per bucket, for every trainable
// parameter, allocated at construction and kept. Without gradient_as_bucket_view the gradients
// are a second copy (autograd's .grad, copied into the bucket); with it .grad is a view.
std::vector<Term> ddp_terms(const ReplicaStates& r, const Options& o, StepPoint p, u64 so_far) {
  const bool view = o.parallel.ddp_bucket_view;
  std::vector<Term> t = single_terms(r, o, p, view ? 0 : so_far);
  if (view) {
    std::erase_if(t, [](const Term& x) { return x.key == "gradients_bytes"; });
  }
  t.push_back({"ddp_buckets_bytes",
               view ? "DDP gradient buckets (the gradients are views of them)" : "DDP gradient buckets (a copy of the gradients)",
               r.grads, whole(o)});
  // The second forward rebuilds the buckets in the order the gradients arrived. The old ones go
  // when NCCL's watchdog drops the last all-reduce's work objects: in fresh two-GPU jobs they were
  // gone by the step's peak in 48 of 58 ranks (docs/estimator.md); estimate.cpp warns of the rest.
  return t;
}

// FSDP: sharded weights, gradients and optimizer state; the root module (embeddings, final norm,
// lm_head) is not resharded after forward; a layer is gathered with its successor prefetched;
// its unsharded gradients are copied into a reduce-scatter buffer of the reduce dtype.
std::vector<Term> fsdp_terms(const ReplicaStates& r, const Options& o, StepPoint p, u64 so_far) {
  const u64 s = shard_degree(o);
  const bool offloaded = o.parallel.offload == Offload::All;
  const std::string label = divided(o, s, o.parallel.fsdp_version == 1 ? "FSDP1" : "FSDP2");
  const u64 layer = mul(r.layer_params, r.compute_width);
  std::vector<Term> t = {{"weights_bytes", "weights (sharded)", offloaded ? 0 : r.weights / s, label}};
  if (p == StepPoint::OptimizerStep) t.push_back({"gradients_bytes", "gradients (sharded)", offloaded ? 0 : r.grads / s, label});
  t.push_back({"optimizer_state_bytes", "optimizer state", offloaded ? 0 : r.state / s, label});
  if (p == StepPoint::OptimizerStep) {
    t.push_back({"optimizer_temporaries_bytes", "optimizer step temporaries", offloaded ? 0 : r.temps / s, label});
    return t;
  }
  t.push_back({"fsdp_root_gathered_bytes", "root unit gathered (embeddings, norm, lm_head)",
               mul(r.root_params, r.compute_width), "whole, gathered"});
  const u64 gathered_layers = o.parallel.reshard_after_forward ? (p == StepPoint::BackwardLayer ? 2 : 0) : r.layers;
  t.push_back({"fsdp_gathered_layers_bytes",
               o.parallel.reshard_after_forward ? "gathered layers (current and prefetched)" : "gathered layers (not resharded after forward)",
               mul(layer, gathered_layers), "whole, gathered"});
  if (p == StepPoint::BackwardLayer) {
    t.push_back({"gradients_bytes", "gradients so far (sharded)", offloaded ? 0 : so_far / s, label});
    t.push_back({"fsdp_unsharded_grads_bytes", "lm_head's and a layer's unsharded gradients, reduce-scatter buffer",
                 mul(r.head_params + r.layer_params, r.compute_width) + mul(r.layer_params, r.reduce_width), "whole"});
  }
  return t;
}

// DeepSpeed ZeRO. With 16-bit weights DeepSpeed keeps fp32 master weights and fp32 optimizer state
// (partitioned from stage 1); the contiguous-gradients bucket holds reduce_bucket_size elements
// (stage_1_and_2.py setup_buckets, stage3.py IPG init); stage 2 keeps the gradient partition
// (grads_in_partition), stage 3 allocates it at init (grad_partitions_flat_buffer).
std::vector<Term> zero_terms(const ReplicaStates& r, const Options& o, StepPoint p, u64 so_far) {
  const u64 d = shard_degree(o);
  const int stage = o.zero_stage;
  const ParallelOptions& q = o.parallel;
  const bool mixed = r.weight_width < 4;
  const bool opt_off = q.offload != Offload::None, all_off = q.offload == Offload::All;
  const u64 widen = mixed ? 4 / r.weight_width : 1;
  const std::string label = divided(o, d, ("ZeRO-" + std::to_string(stage)).c_str());
  const u64 persistent = mul(r.persistent_params, r.weight_width);
  u64 weights = r.weights;
  if (stage >= 3) weights = all_off ? persistent : (r.weights - std::min(r.weights, persistent)) / d + persistent;
  std::vector<Term> t = {{"weights_bytes", stage >= 3 ? "16-bit weights (partitioned)" : "weights", weights,
                          stage >= 3 ? label : whole(o)}};
  t.push_back({"zero_master_weights_bytes", "fp32 master weights", opt_off || !mixed ? 0 : mul(r.trainable_params, 4) / d, label});
  t.push_back({"optimizer_state_bytes", "optimizer state (fp32)", opt_off ? 0 : mul(r.state, widen) / d, label});
  const u64 grads_now = p == StepPoint::OptimizerStep ? r.grads : so_far;
  if (stage == 1 && p != StepPoint::BackwardStart) t.push_back({"gradients_bytes", "gradients", grads_now, whole(o)});
  if (stage == 2 && p != StepPoint::BackwardStart && !opt_off) {
    t.push_back({"gradients_bytes", "gradient partition", r.grads / d, label});
  }
  if (stage >= 3 && !opt_off) t.push_back({"gradients_bytes", "gradient partitions (allocated at init)", r.grads / d, label});
  if (p == StepPoint::OptimizerStep) {
    const u64 partition = r.trainable_params / d;
    t.push_back({"zero_fp32_grads_bytes", "fp32 gradients for the step", opt_off ? 0 : mul(std::min<u64>(partition, 1'000'000'000), 4), label});
    t.push_back({"optimizer_temporaries_bytes", "optimizer step temporaries", opt_off ? 0 : mul(r.temps, widen) / d, label});
  }
  if (p != StepPoint::OptimizerStep || stage >= 3) {
    t.push_back({"zero_bucket_bytes", "reduce bucket (reduce_bucket_size)", mul(q.zero_reduce_bucket, r.weight_width), "per rank"});
  }
  if (stage >= 3 && p != StepPoint::OptimizerStep) {
    // Gathered parameters are released only beyond stage3_max_reuse_distance (1e9 elements), so
    // up to stage3_max_live_parameters stay gathered from the forward into the backward.
    const u64 live = std::min(q.zero_max_live_parameters, mul(r.layers, r.layer_params) + r.root_params);
    t.push_back({"zero_gathered_bytes", "gathered parameters (stage3_max_live_parameters)", mul(live, r.weight_width), "whole, gathered"});
    if (p == StepPoint::BackwardLayer) {
      t.push_back({"zero_layer_grads_bytes", "a layer's unsharded gradients", mul(r.layer_params, r.weight_width), "whole"});
    }
  }
  return t;
}

}  // namespace

u64 data_parallel_degree(const Options& o) {
  const u64 tp = std::max<u64>(o.tensor_parallel, 1);
  return std::max<u64>(o.gpus / tp, 1);
}

DataParallel wrapper(const Options& o) { return o.zero_stage > 0 ? DataParallel::Zero : o.parallel.data; }

u64 shard_degree(const Options& o) {
  const u64 dp = data_parallel_degree(o);
  const DataParallel w = wrapper(o);
  if (dp == 1 || w == DataParallel::Ddp) return 1;
  if (w == DataParallel::Fsdp && o.parallel.shard_group > 0) return std::min(o.parallel.shard_group, dp);
  return dp;
}

bool fsdp_mixed_precision(const Options& o) {
  return wrapper(o) == DataParallel::Fsdp && (o.precision == Precision::AmpBf16 || o.precision == Precision::AmpFp16);
}

std::optional<std::string> parallel_error(const ModelConfig& m, const Options& o) {
  const ParallelOptions& q = o.parallel;
  const u64 tp = o.tensor_parallel;
  if (o.gpus % tp != 0) return "--gpus (all GPUs) must be a multiple of --tp";
  if (m.num_heads % tp != 0 || m.num_kv_heads % tp != 0) return "--tp must divide the attention heads and the KV heads";
  if (m.intermediate_size % tp != 0) return "--tp must divide the MLP's intermediate size";
  if (o.zero_stage < 0 || o.zero_stage > 3) return "--zero must be 0, 1, 2 or 3";
  if (q.data == DataParallel::Zero && o.zero_stage == 0) return "ZeRO needs a stage: --zero 1, 2 or 3";
  if (q.data == DataParallel::Fsdp && o.zero_stage != 0) return "--zero and --fsdp exclude each other";
  const DataParallel w = wrapper(o);
  if (q.fsdp_version != 1 && q.fsdp_version != 2) return "--fsdp-version must be 1 or 2";
  const u64 dp = data_parallel_degree(o);
  if (q.shard_group > 0 && (w != DataParallel::Fsdp || dp % q.shard_group != 0)) {
    return "--shard-group needs --fsdp and must divide the data-parallel GPUs (--gpus / --tp)";
  }
  if (q.offload != Offload::None && w == DataParallel::Ddp) return "--offload needs --fsdp or --zero";
  if (q.offload == Offload::Optimizer && w == DataParallel::Fsdp) return "FSDP offloads everything: use --offload all";
  if (q.offload == Offload::All && w == DataParallel::Zero && o.zero_stage < 3) {
    return "ZeRO offloads parameters only at stage 3: use --offload optimizer";
  }
  if (q.nccl_buffsize == 0) return "--nccl-buffsize must be positive";
  return std::nullopt;
}

std::vector<Term> rank_state_terms(const ReplicaStates& r, const Options& o, StepPoint point, u64 grads_so_far) {
  if (data_parallel_degree(o) == 1) return single_terms(r, o, point, grads_so_far);
  switch (wrapper(o)) {
    case DataParallel::Ddp: return ddp_terms(r, o, point, grads_so_far);
    case DataParallel::Fsdp: return fsdp_terms(r, o, point, grads_so_far);
    case DataParallel::Zero: return zero_terms(r, o, point, grads_so_far);
  }
  return single_terms(r, o, point, grads_so_far);
}

// Hybrid sharding (--shard-group) makes a shard group and a replicate group (FSDP1
// _init_intra_and_inter_node_groups, FSDP2 HSDP's 2-D mesh), new communicators even where a group
// has the world's ranks; a replicate group of one rank is a one-rank communicator.
NcclGroups nccl_communicators(const Options& o) {
  const u64 dp = data_parallel_degree(o);
  NcclGroups n;
  const bool hybrid = wrapper(o) == DataParallel::Fsdp && o.parallel.shard_group > 0 && dp > 1;
  if (hybrid) {
    const u64 shard = shard_degree(o);
    (shard > 1 ? n.peers : n.single) += 1;
    (dp / shard > 1 ? n.peers : n.single) += 1;
  } else if (dp > 1) {
    n.peers += 1;
  }
  if (o.tensor_parallel > 1) n.peers += 1;
  if (n.total() > 1) n.peers += 1;  // the default (world) group beside the sub-groups
  return n;
}

}  // namespace vramdoc::estimator

namespace vramdoc::estimator::detail {

// Tensor parallelism splits a decoder layer's Linears (`quantizable`: attention and MLP, not the
// MoE router); embeddings, lm_head, norms and biases stay whole. A tensor counted per layer
// (count a multiple of the layers; for a headers-only model, a name inside the layers) belongs
// to an FSDP unit, the rest to the root.
void count_local(const ModelConfig& m, const Options& o, const WeightTensor& t, Sizes& s) {
  const u64 L = std::max<u64>(m.num_layers, 1), n = saturating_mul(saturating_mul(t.rows, t.cols), t.count);
  const u64 local = t.quantizable ? n / o.tensor_parallel : n;
  if (t.matmul) s.local_matmul = saturating_add(s.local_matmul, local);
  if (t.tied) return;
  s.local_params = saturating_add(s.local_params, local);
  const bool named_in_layer = t.name.find(".layers.") != std::string::npos || t.name.find(".h.") != std::string::npos ||
                              t.name.find(".blocks.") != std::string::npos;
  const bool per_layer = m.family == Family::FromHeaders ? named_in_layer : holding_layers(m, t) > 0;
  if (per_layer) {
    s.layer_params = saturating_add(s.layer_params, local / L);
  } else {
    s.root_params = saturating_add(s.root_params, local);
  }
  if (saturating_mul(t.rows, t.cols) < o.parallel.zero_persistence_threshold) {
    s.persistent_params = saturating_add(s.persistent_params, local);
  }
}

}  // namespace vramdoc::estimator::detail
