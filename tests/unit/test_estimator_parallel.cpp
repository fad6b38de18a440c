// The estimator on several GPUs: per-rank properties of DDP, FSDP, ZeRO, tensor parallelism and NCCL.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/estimator/estimate.hpp"
#include "core/estimator/parallel.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/render.hpp"
#include "core/units.hpp"

using namespace vramdoc::estimator;

namespace {

const ModelConfig& llama() {
  static const ModelConfig m = *preset_config("llama-3-8b");
  return m;
}

Estimate run(const Options& o, const ModelConfig& m = llama()) {
  auto e = estimate(m, o);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error());
  return e.ok() ? *e : Estimate{};
}

const Phase& phase(const Estimate& e, const std::string& prefix) {
  for (const auto& p : e.phases) {
    if (p.name.rfind(prefix, 0) == 0) return p;
  }
  static const Phase none;
  ADD_FAILURE() << "no phase " << prefix;
  return none;
}

std::uint64_t term(const Phase& p, const std::string& key) {
  std::uint64_t sum = 0;
  for (const auto& t : p.terms) sum += t.key == key ? t.bytes : 0;
  return sum;
}

Options base() {
  Options o;
  o.batch = 2, o.seq = 1024;
  return o;
}

Options sharded(DataParallel data, std::uint64_t gpus, int zero = 0) {
  Options o = base();
  o.gpus = gpus, o.parallel.data = data, o.zero_stage = zero;
  return o;
}

}  // namespace

TEST(EstimatorParallel, ShardedStatesDivideByTheShardGroup) {
  const Estimate one = run(base());
  const Phase& step1 = phase(one, "optimizer step");
  for (std::uint64_t n : {2, 4, 8}) {
    for (DataParallel data : {DataParallel::Fsdp, DataParallel::Zero}) {
      const Estimate e = run(sharded(data, n, data == DataParallel::Zero ? 3 : 0));
      const Phase& step = phase(e, "optimizer step");
      // bf16 weights: FSDP divides the replica's state; ZeRO keeps it (and a master copy) in fp32.
      const std::uint64_t widen = data == DataParallel::Zero ? 2 : 1;
      EXPECT_EQ(term(step, "optimizer_state_bytes"), term(step1, "optimizer_state_bytes") * widen / n) << n;
      EXPECT_EQ(term(step, "gradients_bytes"), term(step1, "gradients_bytes") / n) << n;
      if (data == DataParallel::Fsdp) {
        EXPECT_EQ(term(step, "weights_bytes"), term(step1, "weights_bytes") / n) << n;
      }
    }
    Options z1 = sharded(DataParallel::Zero, n, 1);
    EXPECT_EQ(term(phase(run(z1), "optimizer step"), "weights_bytes"), term(step1, "weights_bytes"));  // ZeRO-1 keeps weights
  }
}

TEST(EstimatorParallel, DdpWithoutBucketViewAddsOneGradientCopy) {
  const Estimate one = run(base());
  const Options ddp = sharded(DataParallel::Ddp, 8);
  Options view = ddp;
  view.parallel.ddp_bucket_view = true;
  const std::uint64_t grads = term(phase(one, "optimizer step"), "gradients_bytes");
  ASSERT_GT(grads, 0U);
  EXPECT_EQ(phase(run(ddp), "optimizer step").allocated_bytes, phase(one, "optimizer step").allocated_bytes + grads);
  EXPECT_EQ(phase(run(view), "optimizer step").allocated_bytes, phase(one, "optimizer step").allocated_bytes);
  // The buckets are allocated at construction: both variants carry them into the backward (the
  // second step's rebuild is assumed to have let the old ones go by the peak).
  EXPECT_EQ(phase(run(ddp), "backward start").allocated_bytes, phase(one, "backward start").allocated_bytes + grads);
  EXPECT_EQ(phase(run(view), "backward start").allocated_bytes, phase(one, "backward start").allocated_bytes + grads);
}

// The model lets the old buckets go before the step's peak (48 of 58 fresh measured ranks, with
// and without bucket views); the race that keeps them is said, with its size, in the warnings
// and in ddp_rebuild_risk_bytes.
TEST(EstimatorParallel, DdpWarnsOfTheRebuildRace) {
  auto warns = [](const Estimate& e) {
    return std::any_of(e.warnings.begin(), e.warnings.end(), [](const std::string& w) { return w.find("rebuild") != std::string::npos; });
  };
  const Options ddp = sharded(DataParallel::Ddp, 8);
  const Estimate e = run(ddp);
  ASSERT_TRUE(warns(e));
  const std::uint64_t buckets = term(phase(e, "backward start"), "ddp_buckets_bytes");
  const std::string size = vramdoc::format_bytes(buckets, 2);
  EXPECT_TRUE(std::any_of(e.warnings.begin(), e.warnings.end(), [&](const std::string& w) { return w.find(size) != std::string::npos; }));
  EXPECT_EQ(e.ddp_rebuild_risk_bytes, buckets);
  Options view = ddp;
  view.parallel.ddp_bucket_view = true;
  EXPECT_TRUE(warns(run(view)));
  EXPECT_EQ(run(view).ddp_rebuild_risk_bytes, buckets);
  EXPECT_FALSE(warns(run(sharded(DataParallel::Fsdp, 8))));
  EXPECT_EQ(run(sharded(DataParallel::Fsdp, 8)).ddp_rebuild_risk_bytes, 0U);
  EXPECT_FALSE(warns(run(base())));
}

TEST(EstimatorParallel, FsdpWithoutReshardKeepsEveryLayerGathered) {
  const Options fsdp = sharded(DataParallel::Fsdp, 8);
  Options keep = fsdp;
  keep.parallel.reshard_after_forward = false;
  const Estimate ea = run(fsdp), eb = run(keep);
  const Phase& a = phase(ea, "backward start");
  const Phase& b = phase(eb, "backward start");
  EXPECT_EQ(term(a, "fsdp_gathered_layers_bytes"), 0U);
  EXPECT_GT(term(b, "fsdp_gathered_layers_bytes"), term(a, "weights_bytes") * 6);  // 7/8 of the weights, gathered
  EXPECT_GT(b.allocated_bytes, a.allocated_bytes);
}

TEST(EstimatorParallel, FsdpMixedPrecisionComputesIn16BitWithoutAutocastCopies) {
  Options mp = sharded(DataParallel::Fsdp, 2);
  mp.precision = Precision::AmpBf16;
  Options bf16 = mp;
  bf16.precision = Precision::Bf16;
  const Estimate a = run(mp), b = run(bf16);
  EXPECT_EQ(term(phase(a, "backward start"), "autocast_weight_copies_bytes"), 0U);
  EXPECT_EQ(term(phase(a, "backward start"), "activations_bytes"), term(phase(b, "backward start"), "activations_bytes"));
  EXPECT_EQ(term(phase(a, "optimizer step"), "weights_bytes"), 2 * term(phase(b, "optimizer step"), "weights_bytes"));
  EXPECT_EQ(term(phase(a, "backward start"), "fsdp_root_gathered_bytes"), term(phase(b, "backward start"), "fsdp_root_gathered_bytes"));
}

TEST(EstimatorParallel, TensorParallelSplitsAttentionAndMlpButNotEmbeddings) {
  Options tp = base();
  tp.gpus = tp.tensor_parallel = 4;
  const ModelConfig& m = llama();
  const std::uint64_t embed = m.hidden_size * m.vocab_size * 2;  // bf16, untied: embed_tokens and lm_head
  const std::uint64_t whole = term(phase(run(base()), "optimizer step"), "weights_bytes");
  const std::uint64_t split = term(phase(run(tp), "optimizer step"), "weights_bytes");
  EXPECT_NEAR(static_cast<double>(split), static_cast<double>((whole - 2 * embed) / 4 + 2 * embed), 0.01 * static_cast<double>(split));
  const Estimate e = run(tp);
  EXPECT_EQ(term(phase(e, "backward start"), "logits_loss_bytes"), term(phase(run(base()), "backward start"), "logits_loss_bytes"));
  EXPECT_LT(term(phase(e, "backward start"), "activations_bytes"), term(phase(run(base()), "backward start"), "activations_bytes"));
}

TEST(EstimatorParallel, NcclCountsOnlyOnSeveralGpusAndGrowsWithItsBuffers) {
  EXPECT_EQ(run(base()).nccl_bytes, 0U);
  const Options ddp = sharded(DataParallel::Ddp, 2);
  Options big = ddp;
  big.parallel.nccl_buffsize *= 2;
  EXPECT_GT(run(ddp).nccl_bytes, 0U);
  EXPECT_GT(run(big).nccl_bytes, run(ddp).nccl_bytes);
  const Estimate e = run(ddp);
  EXPECT_EQ(e.process_bytes, e.peak_reserved_bytes + e.context_bytes + e.nccl_bytes);
  Options both = ddp;
  both.gpus = 4, both.tensor_parallel = 2;
  EXPECT_GT(nccl_communicators(both).total(), nccl_communicators(ddp).total());
}

TEST(EstimatorParallel, MemoryNeverFallsAsBatchGrowsUnderEveryWrapper) {  // allocated within 0.5 %; process within 6.25 %
  std::vector<Options> all;
  for (auto [data, zero] : {std::pair{DataParallel::Ddp, 0}, std::pair{DataParallel::Fsdp, 0}, std::pair{DataParallel::Zero, 1},
                            std::pair{DataParallel::Zero, 2}, std::pair{DataParallel::Zero, 3}}) {
    all.push_back(sharded(data, 8, zero));
    all.back().gpus = 16, all.back().tensor_parallel = 2;
    all.push_back(sharded(data, 8, zero));
    all.back().grad_checkpointing = true;
  }
  for (const auto& p : presets()) {
    const ModelConfig m = *preset_config(p.name);
    for (Options o : all) {
      if (m.num_kv_heads % o.tensor_parallel != 0 || m.intermediate_size % o.tensor_parallel != 0) continue;
      std::uint64_t last = 0, last_process = 0;
      for (std::uint64_t b : {1, 2, 5, 16}) {
        o.batch = b;
        const Estimate e = run(o, m);
        // Allocated comes from the phases, or from the rank's replay where its peak is higher; that
        // peak (at the optimizer step) can fall as the batch grows: 0.36 % for llama-2-13b under
        // TP 2 x DDP 8 from batch 1 to 2 (which transient the replay still holds there; not
        // explained, docs/estimator.md). Never by more than 0.5 %.
        EXPECT_GE(e.peak_allocated_bytes, last - last / 200) << p.name << " batch " << b;
        // The replayed allocator's free segments depend on the tensors' sizes (as PyTorch's do):
        // reserved memory may dip as the batch grows. The largest dips: 5.6 % for qwen3-8b under
        // FSDP2 with checkpointing from batch 1 to 2 (the logits' blocks and the gathered root's
        // fit each other's holes at batch 2), 3.6 % for mixtral-8x7b under TP 2 x DDP 8 from batch
        // 5 to 16 (bigger freed activation blocks take the optimizer state). Never more than 6.25 %.
        EXPECT_GE(e.process_bytes, last_process - last_process / 16) << p.name << " batch " << b;
        last = e.peak_allocated_bytes, last_process = e.process_bytes;
      }
    }
  }
}

TEST(EstimatorParallel, ContradictorySettingsAreErrors) {
  Options o = base();
  o.gpus = 6, o.tensor_parallel = 4;
  EXPECT_FALSE(estimate(llama(), o).ok());  // 6 GPUs are not whole TP groups of 4
  o = sharded(DataParallel::Fsdp, 8, 3);
  EXPECT_FALSE(estimate(llama(), o).ok());  // FSDP and ZeRO at once
  o = sharded(DataParallel::Fsdp, 8);
  o.parallel.shard_group = 3;
  EXPECT_FALSE(estimate(llama(), o).ok());  // 3 does not divide 8
  o = sharded(DataParallel::Ddp, 8);
  o.parallel.offload = Offload::All;
  EXPECT_FALSE(estimate(llama(), o).ok());  // DDP does not offload
  o = sharded(DataParallel::Zero, 8, 2);
  o.parallel.offload = Offload::All;
  EXPECT_FALSE(estimate(llama(), o).ok());  // ZeRO-2 offloads only the optimizer
  o.tensor_parallel = 3, o.gpus = 9, o.zero_stage = 0, o.parallel.data = DataParallel::Ddp, o.parallel.offload = Offload::None;
  EXPECT_FALSE(estimate(llama(), o).ok());  // 3 does not divide llama's 8 KV heads
}

TEST(EstimatorParallel, HybridShardingDividesByTheShardGroupOnly) {
  Options hsdp = sharded(DataParallel::Fsdp, 16);
  hsdp.parallel.shard_group = 8;
  const Estimate ea = run(hsdp), eb = run(sharded(DataParallel::Fsdp, 8));
  const Phase& a = phase(ea, "optimizer step");
  const Phase& b = phase(eb, "optimizer step");
  EXPECT_EQ(term(a, "optimizer_state_bytes"), term(b, "optimizer_state_bytes"));
  EXPECT_GT(nccl_communicators(hsdp).total(), nccl_communicators(sharded(DataParallel::Fsdp, 8)).total());
}

// HYBRID_SHARD on one node of two GPUs (measured 2026-11-30): the world group, a two-rank shard
// group and a one-rank replicate group; a one-rank communicator costs NCCL's fixed part only
// (the NCCL-only process grew by 388 MiB for it, a two-rank one by 486 MiB).
TEST(EstimatorParallel, HybridShardingOnOneNodeAddsAOneRankCommunicator) {
  Options one_node = sharded(DataParallel::Fsdp, 2);
  one_node.parallel.fsdp_version = 1;
  one_node.parallel.shard_group = 2;
  const NcclGroups g = nccl_communicators(one_node);
  EXPECT_EQ(g.peers, 2U);
  EXPECT_EQ(g.single, 1U);
  Options full = one_node;
  full.parallel.shard_group = 0;
  EXPECT_EQ(nccl_communicators(full).total(), 1U);
  EXPECT_EQ(run(one_node).nccl_bytes - run(full).nccl_bytes, (390 + 486) * vramdoc::MiB);
  EXPECT_EQ(run(one_node).peak_allocated_bytes, run(full).peak_allocated_bytes);  // the same shards
}

TEST(EstimatorParallel, TableAndJsonSayWhatIsSharded) {
  const Options o = sharded(DataParallel::Fsdp, 8);
  const Estimate e = run(o);
  const std::string text = render_text(llama(), o, e, {});
  EXPECT_NE(text.find("per GPU of 8: FSDP2 shards over 8"), std::string::npos) << text;
  EXPECT_NE(text.find("1/8 (FSDP2)"), std::string::npos) << text;
  EXPECT_NE(text.find("NCCL"), std::string::npos) << text;
  auto j = nlohmann::json::parse(render_json(llama(), o, e, {}));
  EXPECT_EQ(j["parallel"]["data_parallel"], "fsdp2");
  EXPECT_EQ(j["sharding"]["weights_bytes"], "1/8 (FSDP2)");
  std::uint64_t sum = 0;
  for (const auto& [k, v] : j["breakdown"].items()) sum += v.get<std::uint64_t>();
  EXPECT_EQ(sum, j["process_bytes"].get<std::uint64_t>());
  EXPECT_EQ(render_text(llama(), base(), run(base()), {}).find("per rank"), std::string::npos);  // one GPU: no column
}
