// One rank's allocation sequence of a training step on several GPUs (DDP, FSDP2, FSDP1, tensor
// parallel), in step_sequence.cpp's order, from the rank's plan (rank_plan.hpp), replayed through
// one caching allocator per CUDA stream: CUDACachingAllocator keys its free blocks by stream, so a
// block freed on one stream never serves another. What runs on which stream was read off the
// allocator traces of 2026-11-30-b/-c (docs/estimator.md, "Reserved memory"): FSDP2 gathers on its
// all-gather stream (the 16-bit shard copy, the output) and copies out on the default stream, where
// foreach_reduce's input lives too; its sharded gradient is the reduce-scatter stream's. FSDP1
// gathers the FlatParameter on the all-gather stream (under mixed precision from a 16-bit shard
// made on a fourth, pre-unshard, stream), makes the unit's flat gradient there, and reduces on the
// post-backward stream.
#include <algorithm>
#include <array>
#include <unordered_map>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/forward_ops.hpp"
#include "core/estimator/parallel.hpp"
#include "core/estimator/rank_plan.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 add(u64 a, u64 b) { return saturating_add(a, b); }

enum Stream : std::size_t { kCompute = 0, kGather = 1, kReduce = 2, kPreUnshard = 3, kStreams = 4 };
constexpr u64 kWorkspace = 32 * MiB;      // cuBLAS and cuBLASLt, one each (as step_sequence.cpp)

class Pools : public Tape {
 public:
  explicit Pools(AllocatorSettings s) : pools_{CachingAllocator(s), CachingAllocator(s), CachingAllocator(s), CachingAllocator(s)} {}
  using Tape::free;
  u64 alloc(u64 bytes, Use = Use::Activation) override { return alloc_on(bytes, kCompute); }
  u64 alloc_on(u64 bytes, Stream stream) {
    if (bytes == 0) return 0;
    live_[next_] = {stream, pools_[stream].allocate(bytes), bytes};
    u64 reserved = 0, allocated = 0;
    for (const auto& p : pools_) reserved = add(reserved, p.reserved_bytes()), allocated = add(allocated, p.allocated_bytes());
    result_.peak_reserved_bytes = std::max(result_.peak_reserved_bytes, reserved);
    result_.peak_allocated_bytes = std::max(result_.peak_allocated_bytes, allocated);
    return next_++;
  }
  void free(u64 id) override {
    const auto it = live_.find(id);
    if (it == live_.end()) return;
    pools_[it->second.stream].release(it->second.handle);
    live_.erase(it);
  }
  u64 bytes_of(u64 id) const override {
    const auto it = live_.find(id);
    return it == live_.end() ? 0 : it->second.bytes;
  }
  ReplayResult result() const { return result_; }

 private:
  struct Live {
    Stream stream;
    CachingAllocator::Handle handle;
    u64 bytes;
  };
  std::array<CachingAllocator, kStreams> pools_;
  std::unordered_map<u64, Live> live_;
  ReplayResult result_;
  u64 next_ = 1;
};

class RankStep {
 public:
  RankStep(Pools& pools, const RankPlan& p, const Run& r) : s_(pools), p_(p), r_(r), f_(pools, r), gathered_(p.kinds.size()) {
    f_.use_cache = !p.checkpointing;  // transformers turns the cache off under gradient checkpointing
  }

  void setup() {
    if (p_.fsdp1) return fsdp1_init();
    for (u64 b : p_.embed) s_.alloc(b);
    for (std::size_t l = 0; l < p_.kinds.size(); ++l) {
      for (u64 b : p_.layer) s_.alloc(b);
    }
    for (u64 b : p_.head) s_.alloc(b);
    if (p_.wrapper == DataParallel::Ddp && p_.buckets_total > 0) release_tied_head(s_, r_, r_.w.weight);  // built on the GPU
    u64 in_flight = 0;  // broadcast_coalesced flattens the next chunk before it frees the last
    for (u64 b : p_.sync_chunks) {
      const u64 next = s_.alloc(b);
      s_.free(in_flight);
      in_flight = next;
    }
    s_.free(in_flight);
    buckets_ = s_.alloc(p_.buckets_total);
  }

  // FullyShardedDataParallel on a meta-device model (param_init_fn), unit by unit, the layers
  // before the root: the unit's parameters materialised whole, flattened into one FlatParameter,
  // the rank's shard copied out, the whole ones freed (traces of 2026-11-30-c). Their blocks stay
  // cached for the steps.
  void fsdp1_init() {
    auto unit = [&](const std::vector<u64>& whole, u64 shard) {
      std::vector<u64> made;
      for (u64 b : whole) made.push_back(s_.alloc(b));
      const u64 flat = s_.alloc(mul(shard, p_.shards));
      s_.alloc(shard);
      s_.free(flat);
      s_.free(made);
    };
    for (std::size_t l = 0; l < p_.kinds.size(); ++l) unit(p_.whole_layer, p_.layer.front());
    unit(p_.whole_root, p_.embed.front());
  }

  // DDP's rebuild of its buckets at the second forward: the flat tensor freed (the race that can
  // keep it longer: estimate.cpp), one tensor per bucket carved from its block.
  void step(bool first, bool rebuild) {
    if (rebuild && buckets_ != 0) {
      s_.free(buckets_);
      buckets_ = 0;
      for (u64 b : p_.buckets) s_.alloc(b);
    }
    forward(first);
    backward(first);
    optimizer(first);
  }

 private:
  // A unit's all-gather. FSDP1: the FlatParameter on the all-gather stream (under mixed precision
  // from a 16-bit copy of the shard on the pre-unshard stream). FSDP2 (traces of 2026-11-30-c):
  // under mixed precision the 16-bit copy of the shard, then the all-gather output, both on the
  // all-gather stream; copied out into one tensor per parameter on the default stream.
  std::vector<u64> gather(u64 bytes, const std::vector<u64>& tensors) {
    if (p_.fsdp1) {
      const u64 cast = p_.mixed ? s_.alloc_on(bytes / p_.shards, kPreUnshard) : 0;
      const u64 flat = s_.alloc_on(bytes, kGather);
      s_.free(cast);
      return {flat};
    }
    const u64 input = p_.mixed ? s_.alloc_on(bytes / p_.shards, kGather) : 0;
    const u64 out = s_.alloc_on(bytes, kGather);
    s_.free(input);
    std::vector<u64> unsharded;
    for (u64 t : tensors) unsharded.push_back(s_.alloc(t));
    s_.free(out);
    return unsharded;
  }
  void gather_layer(std::size_t l) {
    if (p_.sharded && l < gathered_.size() && gathered_[l].empty()) gathered_[l] = gather(p_.unit, p_.layer_grads);
  }
  void reshard_layer(std::size_t l) {
    s_.free(gathered_[l]);
    gathered_[l].clear();
  }
  void gather_root() { root_ = gather(p_.root, p_.root_tensors); }

  // The forward op by op (forward_ops.hpp) between FSDP's gathers: each layer's saved tensors kept
  // (with checkpointing only its input), the final norm's and lm_head's.
  // A fresh process's first matmul makes cuBLAS's workspace (step_sequence.cpp's order, traces).
  void forward(bool first) {
    if (p_.sharded) gather_root();
    f_.train = true;
    Prelude pre = prelude(f_, p_.kinds, first ? kWorkspace : 0);
    embeddings_ = f_.take_saved();
    std::vector<u64> cache;
    u64 x = pre.hidden;
    for (std::size_t l = 0; l < p_.kinds.size(); ++l) {
      gather_layer(l);
      gather_layer(l + 1);  // the next layer's all-gather is issued before this one reshards
      std::vector<u64> saved;
      const u64 out = p_.checkpointing ? checkpointed_layer(f_, p_.layer_casts, p_.kinds[l], x)
                                       : recorded_layer(f_, p_.layer_casts, p_.kinds[l], x, saved, cache);
      const bool kept = std::find(saved.begin(), saved.end(), x) != saved.end();
      if (p_.checkpointing) checkpoints_.push_back(x);
      else if (l == 0) pre.held.push_back(kept ? 0 : x);  // the embeddings' output lives to the model's end
      else if (!kept) s_.free(x);
      saved_.push_back(std::move(saved));
      x = out;
      if (p_.reshard) reshard_layer(l);
    }
    saved_.push_back(record_head(f_, x, p_.lm_head_cast));
    s_.free(pre.held), s_.free(cache), s_.free(f_.saved_mask);  // (the saved mask: freed early here, approximate)
    f_.saved_mask = 0;
    // FSDP2's root reshards after forward when reshard_after_forward=True is passed for it too (as
    // torchtitan and Accelerate do, and the measurements); its backward gathers it again.
    if (p_.sharded && !p_.fsdp1 && p_.reshard) s_.free(root_), root_.clear();
  }

  // FSDP's post-backward: the unsharded gradients copied into the reduce-scatter buffer, the
  // sharded result kept as the gradient (FSDP1 frees it at the next forward's pre-forward, which
  // for the allocator's pools is the same as zero_grad: the blocks stay in the reduce stream's).
  void reduce(std::vector<u64>& unsharded, u64 in, u64 out) {
    const u64 buffer = s_.alloc(in);  // foreach_reduce's input: on the default stream (traces)
    s_.free(unsharded);
    grads_.push_back(s_.alloc_on(out, kReduce));
    s_.free(buffer);
  }

  // FSDP1's post-backward hook: the per-parameter gradients become the unit's flat gradient (on
  // the all-gather stream, where autograd accumulates the FlatParameter's), the unit reshards,
  // then on the post-backward stream the fp32 copy under mixed precision and the sharded output.
  void reduce_flat(std::vector<u64>& unsharded, u64 flat_bytes, u64 in, u64 out, std::vector<u64>& gathered) {
    const u64 flat = s_.alloc_on(flat_bytes, kGather);
    s_.free(unsharded);
    s_.free(gathered);
    gathered.clear();
    const u64 upcast = p_.mixed ? s_.alloc_on(in, kReduce) : 0;
    grads_.push_back(s_.alloc_on(out, kReduce));
    s_.free(upcast), s_.free(flat);
  }

  void backward_layer(std::size_t l, u64& dx) {
    if (p_.sharded) {
      gather_layer(l);
      if (l > 0) gather_layer(l - 1);  // backward prefetch of the next unit
    }
    std::vector<u64> made;
    dx = layer_backward(f_, p_.backward, p_.kinds[l], p_.checkpointing ? checkpoints_[l] : 0, saved_[l], dx, made);
    if (p_.fsdp1) return reduce_flat(made, p_.unit, p_.unit_rs_in, p_.unit_rs_out, gathered_[l]);
    keep_grads(made, p_.unit_rs_in, p_.unit_rs_out);
    if (p_.sharded) reshard_layer(l);
  }

  // Where a layer's new gradients go: FSDP reduce-scatters them; DDP with gradient_as_bucket_view
  // copies them into the bucket (.grad becomes a view); otherwise they stay until zero_grad.
  void keep_grads(std::vector<u64>& made, u64 rs_in, u64 rs_out) {
    if (p_.sharded) return reduce(made, rs_in, rs_out);
    if (p_.bucket_view && p_.buckets_total > 0) return s_.free(made);
    grads_.insert(grads_.end(), made.begin(), made.end());
    made.clear();
  }

  void backward(bool first) {
    if (p_.sharded && root_.empty()) gather_root();  // FSDP2's root resharded after forward: gathered again
    // the root's pre-backward hook prefetches the next unit in backward order, the last layer: it is
    // gathered beside the loss's gradients (FSDP1 BACKWARD_PRE, FSDP2's prefetch; traces)
    if (p_.sharded && !p_.kinds.empty()) gather_layer(p_.kinds.size() - 1);
    const u64 logits_grad = loss_and_its_gradient(s_, p_.logits_act, p_.logits_fp32, 0, f_.autocast_cache);  // soft-capping not replayed per rank
    std::vector<u64> root_grads;  // lm_head's (and the final norm's) first, the embeddings' last
    u64 tied_share = 0;
    // the second cuBLAS workspace: at lm_head's first backward matmuls (a fresh process's, traces)
    u64 dx = head_backward(s_, p_.outer, logits_grad, saved_.back(), first ? kWorkspace : 0, root_grads, tied_share);
    for (std::size_t l = p_.kinds.size(); l-- > 0;) backward_layer(l, dx);
    embeddings_backward(s_, p_.outer, embeddings_, tied_share, dx, root_grads);
    if (p_.fsdp1) {
      reduce_flat(root_grads, p_.root, p_.root_rs_in, p_.root_rs_out, root_);
    } else {
      keep_grads(root_grads, p_.root_rs_in, p_.root_rs_out);
      if (p_.sharded) s_.free(root_), root_.clear();
    }
    saved_.clear(), checkpoints_.clear();
  }

  void optimizer(bool first) {
    std::vector<u64> trainable = p_.opt_embed;  // the optimizer's tensors in model.parameters() order
    for (std::size_t l = 0; l < p_.kinds.size(); ++l) trainable.insert(trainable.end(), p_.opt_layer.begin(), p_.opt_layer.end());
    trainable.insert(trainable.end(), p_.opt_head.begin(), p_.opt_head.end());
    if (first) {
      for (u64 b : trainable) {
        for (u64 k = 0; k < p_.states_per_tensor; ++k) s_.alloc(b);
      }
    }
    if (p_.foreach_temporaries) {  // _foreach_sqrt(exp_avg_sq): one temporary per parameter
      std::vector<u64> temps;
      for (u64 b : trainable) temps.push_back(s_.alloc(b));
      s_.free(temps);
    }
    s_.free(grads_);  // zero_grad(set_to_none=True)
  }

  Pools& s_;
  const RankPlan& p_;
  const Run& r_;
  Forward f_;
  std::vector<std::vector<u64>> gathered_;
  std::vector<u64> grads_, checkpoints_, embeddings_, root_;
  std::vector<std::vector<u64>> saved_;
  u64 buckets_ = 0;
};

}  // namespace

bool replays_rank(const Options& o) {
  const bool several = o.gpus > 1 || o.tensor_parallel > 1;
  return several && o.mode == Mode::Train && o.quant == Quant::None && wrapper(o) != DataParallel::Zero &&
         o.parallel.offload == Offload::None;
}

namespace {

ReplayResult replay_one(const Run& r, u64 rank) {
  const RankPlan plan = rank_plan(r, rank);
  Pools pools(AllocatorSettings{r.o.expandable_segments, std::numeric_limits<u64>::max()});
  RankStep step(pools, plan, r);
  step.setup();
  for (int i = 0; i < 3; ++i) step.step(i == 0, i == 1);
  return pools.result();
}

}  // namespace

// Ranks differ only under FSDP1 (the FlatParameter's parts); every rank's numbers are then the
// largest over at most kSampledRanks ranks spread over the shard group, the first and last included.
ReplayResult replay_rank(const Run& r) {
  const u64 s = shard_degree(r.o);
  const bool uneven = wrapper(r.o) == DataParallel::Fsdp && r.o.parallel.fsdp_version == 1 && s > 1;
  if (!uneven) return replay_one(r, 0);
  if (r.o.parallel.rank != kEveryRank) return replay_one(r, r.o.parallel.rank / std::max<u64>(r.o.tensor_parallel, 1) % s);
  constexpr u64 kSampledRanks = 8;
  const u64 n = std::min(s, kSampledRanks);
  ReplayResult worst;
  for (u64 i = 0; i < n; ++i) {
    const ReplayResult one = replay_one(r, n == 1 ? 0 : i * (s - 1) / (n - 1));
    if (one.peak_reserved_bytes > worst.peak_reserved_bytes) worst = one;
  }
  return worst;
}

}  // namespace vramdoc::estimator::detail
