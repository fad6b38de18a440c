// One rank's plan (rank_plan.hpp): the tensors per strategy, from the model's weight table.
#include "core/estimator/rank_plan.hpp"

#include <algorithm>

#include "core/estimator/flat_param.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 add(u64 a, u64 b) { return saturating_add(a, b); }

constexpr u64 kDdpBucketBytes = 25 * MiB;        // DistributedDataParallel's bucket_cap_mb default
constexpr u64 kDdpFirstBucketBytes = 1 * MiB;    // dist._DEFAULT_FIRST_BUCKET_BYTES
constexpr u64 kBroadcastChunkBytes = 250 * MiB;  // _sync_module_states' broadcast_bucket_size

void weight_lists(const Run& r, u64 width, u64 shard, RankPlan& p, bool grads) {
  const u64 L = std::max<u64>(r.m.num_layers, 1);
  for (const auto& t : describe_weights(r.m)) {
    if (t.tied) continue;
    const u64 each = mul(mul(t.rows, t.cols), width) / (t.quantizable ? r.o.tensor_parallel : 1) / shard;
    std::vector<u64>& layer = grads ? p.layer_grads : p.layer;
    const u64 Ls = holding_layers(r.m, t);  // DeepSeek: the dense or the MoE ones
    if (Ls > 0) {
      // The rank plan repeats one layer: a tensor of only the dense or only the MoE layers is
      // spread over all of them (totals exact; FSDP's gathered unit an average layer).
      const u64 per_layer = t.count / Ls, tensors = t.name.rfind("experts.", 0) == 0 ? 1 : per_layer;
      for (u64 i = 0; i < tensors; ++i) layer.push_back(mul(mul(each, per_layer / tensors), Ls) / L);
      if (grads) p.layer_grad_casts.insert(p.layer_grad_casts.end(), tensors, t.matmul && r.w.amp);
      if (!grads && t.matmul && r.w.amp && !t.lora_target) p.layer_casts.push_back(mul(mul(mul(t.rows, t.cols), per_layer), 2) / (t.quantizable ? r.o.tensor_parallel : 1));
    } else {
      const bool head = head_tensor(t);
      if (grads && t.name == "lm_head") p.lm_head_at = p.head_grads.size();
      (head ? (grads ? p.head_grads : p.head) : (grads ? p.embed_grads : p.embed)).push_back(mul(each, t.count));
    }
  }
}

u64 sum(const std::vector<u64>& v) {
  u64 s = 0;
  for (u64 x : v) s = add(s, x);
  return s;
}

// FSDP1 with use_orig_params: the optimizer steps the original parameters as views of the rank's
// chunk of each FlatParameter (flat_param.cpp), one state per part the rank holds.
void fsdp1_optimizer_parts(const Run& r, u64 width, u64 shards, u64 rank, RankPlan& p) {
  const UnitParams u = unit_params(r.m, r.o.tensor_parallel);
  p.opt_layer = flat_param_parts(u.layer, width, shards, rank);
  std::vector<u64> root = u.embed;
  root.insert(root.end(), u.head.begin(), u.head.end());
  const std::vector<u64> parts = flat_param_parts(root, width, shards, rank);
  p.opt_embed.assign(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(u.embed.size()));
  p.opt_head.assign(parts.begin() + static_cast<std::ptrdiff_t>(u.embed.size()), parts.end());
}

// Groups tensors of `bytes`, in order, into chunks closed once they reach `cap` (the first at
// `first`): each chunk's bytes and how many tensors it holds.
struct Chunk {
  u64 bytes = 0, tensors = 0;
};
std::vector<Chunk> chunks(const std::vector<u64>& bytes, u64 first, u64 cap) {
  std::vector<Chunk> out;
  Chunk open;
  for (u64 b : bytes) {
    open.bytes = add(open.bytes, b), ++open.tensors;
    if (open.bytes >= (out.empty() ? first : cap)) out.push_back(open), open = {};
  }
  if (open.tensors > 0) out.push_back(open);
  return out;
}

void ddp_buckets(const Run& r, u64 width, RankPlan& p) {
  const UnitParams u = unit_params(r.m, r.o.tensor_parallel);
  std::vector<u64> order;  // model.parameters() order, in bytes
  for (u64 n : u.embed) order.push_back(mul(n, width));
  for (u64 l = 0; l < r.m.num_layers; ++l) {
    for (u64 n : u.layer) order.push_back(mul(n, width));
  }
  for (u64 n : u.head) order.push_back(mul(n, width));
  p.buckets_total = sum(order);
  // _sync_module_states broadcasts the weights in coalesced chunks; a chunk of one tensor (one
  // above the chunk size) goes as it is, without a flattened copy (traces: no allocation for it)
  for (const Chunk& c : chunks(order, kBroadcastChunkBytes, kBroadcastChunkBytes)) {
    if (c.tensors > 1) p.sync_chunks.push_back(c.bytes);
  }
  std::reverse(order.begin(), order.end());
  for (const Chunk& c : chunks(order, kDdpFirstBucketBytes, kDdpBucketBytes)) p.buckets.push_back(c.bytes);
}

}  // namespace

RankPlan rank_plan(const Run& r, u64 rank) {
  RankPlan p;
  const Options& o = r.o;
  const bool mp = fsdp_mixed_precision(o);
  const u64 tokens = mul(o.batch, o.seq), logit_tokens = o.logits_last_only ? o.batch : tokens, s = shard_degree(o);
  p.wrapper = wrapper(o);
  p.sharded = p.wrapper == DataParallel::Fsdp && s > 1;
  p.fsdp1 = p.sharded && o.parallel.fsdp_version == 1;
  p.mixed = mp, p.shards = s;
  p.reshard = o.parallel.reshard_after_forward;
  p.bucket_view = o.parallel.ddp_bucket_view;
  p.checkpointing = o.grad_checkpointing;
  const u64 storage = mp ? 4 : r.w.weight, compute = mp ? 2 : storage, reduce = mp ? 4 : storage;
  weight_lists(r, storage, p.sharded && !p.fsdp1 ? s : 1, p, false);
  weight_lists(r, p.sharded ? compute : storage, 1, p, true);  // FSDP: the unsharded gradients
  p.opt_embed = p.embed, p.opt_layer = p.layer, p.opt_head = p.head;
  p.root_tensors = p.embed_grads;
  p.root_tensors.insert(p.root_tensors.end(), p.head_grads.begin(), p.head_grads.end());
  if (p.fsdp1) {  // one FlatParameter per unit, sharded
    fsdp1_optimizer_parts(r, storage, s, rank, p);
    p.whole_layer = p.layer, p.whole_root = p.embed;
    p.whole_root.insert(p.whole_root.end(), p.head.begin(), p.head.end());
    p.layer = {sum(p.layer) / s};
    p.embed = {add(sum(p.embed), sum(p.head)) / s};
    p.head.clear();
  }
  if (r.w.amp) p.lm_head_cast = mul(mul(r.m.hidden_size, r.m.vocab_size), 2);
  p.unit = mul(r.s.layer_params, compute), p.root = mul(r.s.root_params, compute);
  p.unit_rs_in = mul(r.s.layer_params, reduce), p.unit_rs_out = p.unit_rs_in / s;
  p.root_rs_in = mul(r.s.root_params, reduce), p.root_rs_out = p.root_rs_in / s;
  if (p.wrapper == DataParallel::Ddp && data_parallel_degree(o) > 1) {
    ddp_buckets(r, storage, p);
  }
  p.kinds = layer_order(r.m);
  p.residual = mul(mul(tokens, r.m.hidden_size), r.w.wide);
  p.logits_act = mul(mul(logit_tokens, r.m.vocab_size), r.w.act);
  p.logits_fp32 = mul(mul(logit_tokens, r.m.vocab_size), 4);
  const bool adam = o.optimizer == Optimizer::AdamW || o.optimizer == Optimizer::Adam;
  p.states_per_tensor = adam ? 2 : o.optimizer == Optimizer::SgdMomentum ? 1 : 0;
  p.foreach_temporaries = adam;
  p.backward = {p.layer_grads, p.layer_grad_casts, p.layer_casts, p.residual};
  WeightTensors outer;  // the gradients outside the layers
  outer.head = p.head_grads, outer.embed = p.embed_grads, outer.lm_head_at = p.lm_head_at;
  const bool tied = r.m.tie_word_embeddings && o.mode == Mode::Train && !p.embed_grads.empty();
  p.outer = outer_grads(outer, tied, r.w.amp, mul(mul(tokens, r.m.hidden_size), r.w.act), p.residual);
  return p;
}

}  // namespace vramdoc::estimator::detail
