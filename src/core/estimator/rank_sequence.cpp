// One rank's allocation sequence of a training step on several GPUs (DDP, FSDP2, FSDP1, tensor
// parallel), in step_sequence.cpp's order, replayed through one caching allocator per CUDA stream:
// CUDACachingAllocator keys its free blocks by stream, so a block freed on one stream never serves
// another. FSDP gathers on its all-gather stream (FSDP2: the all-gather output, copied out into
// the layer's weights on the default stream; FSDP1: the unsharded FlatParameter itself) and
// reduce-scatters on its own (the padded gradient buffer and the sharded gradient, which FSDP2
// keeps as a view of the reduce-scatter output until zero_grad). FSDP1 under mixed precision
// casts the shard to 16 bits on a fourth stream (pre-unshard) before gathering, and its unit's
// gradient, one flat tensor, is made on the all-gather stream (traces of 2026-11-30-b).
#include <algorithm>
#include <array>
#include <unordered_map>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/flat_param.hpp"
#include "core/estimator/forward_ops.hpp"
#include "core/estimator/parallel.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 add(u64 a, u64 b) { return saturating_add(a, b); }

enum Stream : std::size_t { kCompute = 0, kGather = 1, kReduce = 2, kPreUnshard = 3, kStreams = 4 };
constexpr u64 kWorkspace = 32 * MiB;      // cuBLAS and cuBLASLt, one each (as step_sequence.cpp)
constexpr u64 kDdpBucketBytes = 25 * MiB;      // DistributedDataParallel's bucket_cap_mb default
constexpr u64 kDdpFirstBucketBytes = 1 * MiB;  // dist._DEFAULT_FIRST_BUCKET_BYTES
constexpr u64 kBroadcastChunkBytes = 250 * MiB;  // _sync_module_states' broadcast_bucket_size

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
  void mark() {
    u64 reserved = 0;
    for (const auto& p : pools_) reserved = add(reserved, p.reserved_bytes());
    result_.phase_reserved.push_back(reserved);
  }

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

void weight_lists(const Run& r, u64 width, u64 shard, RankPlan& p, bool grads) {
  const u64 L = std::max<u64>(r.m.num_layers, 1);
  for (const auto& t : describe_weights(r.m)) {
    if (t.tied) continue;
    const u64 each = mul(mul(t.rows, t.cols), width) / (t.quantizable ? r.o.tensor_parallel : 1) / shard;
    std::vector<u64>& layer = grads ? p.layer_grads : p.layer;
    const u64 Ls = layers_in(r.m, t.layers);  // the layers that hold it (DeepSeek: dense or MoE ones)
    if (Ls > 0 && t.count >= Ls && t.count % Ls == 0) {
      // The rank plan repeats one layer: a tensor of only the dense or only the MoE layers is
      // spread over all of them (totals exact; FSDP's gathered unit an average layer).
      const u64 per_layer = t.count / Ls, tensors = t.name.rfind("experts.", 0) == 0 ? 1 : per_layer;
      for (u64 i = 0; i < tensors; ++i) layer.push_back(mul(mul(each, per_layer / tensors), Ls) / L);
      if (grads) p.layer_grad_casts.insert(p.layer_grad_casts.end(), tensors, t.matmul && r.w.amp);
      if (!grads && t.matmul && r.w.amp && !t.lora_target) p.layer_casts.push_back(mul(mul(mul(t.rows, t.cols), per_layer), 2) / (t.quantizable ? r.o.tensor_parallel : 1));
    } else {
      const bool head = t.name == "lm_head" || t.name == "norm" || t.name == "lm_head.bias";
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

// Groups `bytes` in order into chunks closed once they reach `cap` (the first at `first`).
std::vector<u64> chunks(const std::vector<u64>& bytes, u64 first, u64 cap) {
  std::vector<u64> out;
  u64 open = 0;
  for (u64 b : bytes) {
    open = add(open, b);
    if (open >= (out.empty() ? first : cap)) out.push_back(open), open = 0;
  }
  if (open > 0) out.push_back(open);
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
  u64 open = 0, tensors = 0;
  for (u64 b : order) {
    open = add(open, b), ++tensors;
    if (open < kBroadcastChunkBytes) continue;
    if (tensors > 1) p.sync_chunks.push_back(open);
    open = 0, tensors = 0;
  }
  if (tensors > 1) p.sync_chunks.push_back(open);
  std::reverse(order.begin(), order.end());
  p.buckets = chunks(order, kDdpFirstBucketBytes, kDdpBucketBytes);
}

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
    s_.mark();
    backward(first);
    s_.mark();
    optimizer(first);
    s_.mark();
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
    s_.free(pre.held), s_.free(cache);
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
    const u64 logits_grad = loss_and_its_gradient(s_, p_.logits_act, p_.logits_fp32, 0, f_.autocast_cache);  // soft-capping not replayed per rank
    std::vector<u64> root_grads;  // lm_head's (and the final norm's) first, the embeddings' last
    u64 tied_share = 0;  // the second workspace: at lm_head's backward matmuls
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
  pools.mark();
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
