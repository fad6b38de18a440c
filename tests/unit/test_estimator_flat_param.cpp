// FSDP1's FlatParameter parts per rank (flat_param.cpp) and what they change in the estimate.
#include <gtest/gtest.h>

#include <numeric>

#include "core/estimator/estimate.hpp"
#include "core/estimator/flat_param.hpp"
#include "core/estimator/model_config.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;
using namespace vramdoc::estimator::detail;

namespace {

u64 total(const std::vector<u64>& v) { return std::accumulate(v.begin(), v.end(), u64{0}); }

}  // namespace

TEST(EstimatorFlatParam, EveryElementOnExactlyOneRank) {
  const std::vector<u64> numels = {4'194'304, 524'288, 524'288, 4'194'304, 11'534'336, 11'534'336, 11'534'336, 2048, 2048};
  for (u64 shards : {1, 2, 3, 8}) {
    std::vector<u64> per_param(numels.size(), 0);
    for (u64 r = 0; r < shards; ++r) {
      const auto parts = flat_param_parts(numels, 2, shards, r);
      ASSERT_EQ(parts.size(), numels.size());
      for (std::size_t i = 0; i < parts.size(); ++i) per_param[i] += parts[i];
    }
    for (std::size_t i = 0; i < numels.size(); ++i) EXPECT_EQ(per_param[i], numels[i] * 2) << shards << " shards, param " << i;
  }
}

TEST(EstimatorFlatParam, ChunksAreEqualAndParametersStartOn16Bytes) {
  // three fp32 parameters of 3, 5 and 8 elements: 16-byte alignment pads the first to 4 and the
  // second to 8 elements, 20 in all; two chunks of 10: rank 0 holds 3 + 5 (the padding between),
  // rank 1 the last parameter's 8 (and 2 of padding)
  EXPECT_EQ(flat_param_parts({3, 5, 8}, 4, 2, 0), (std::vector<u64>{12, 20, 0}));
  EXPECT_EQ(flat_param_parts({3, 5, 8}, 4, 2, 1), (std::vector<u64>{0, 0, 32}));
  EXPECT_EQ(total(flat_param_parts({3, 5, 8}, 4, 1, 0)), 64U);
}

TEST(EstimatorFlatParam, LlamaLayerInNamedParametersOrder) {
  ModelConfig m;
  m.family = Family::Llama;
  m.hidden_size = 2048, m.num_layers = 22, m.num_heads = 32, m.num_kv_heads = 4, m.head_dim = 64;
  m.intermediate_size = 5632, m.vocab_size = 32000;
  const UnitParams u = unit_params(m, 1);
  // q, k, v, o, gate, up, down, then the two RMSNorms
  EXPECT_EQ(u.layer, (std::vector<u64>{2048 * 2048, 2048 * 256, 2048 * 256, 2048 * 2048, 2048 * 5632, 2048 * 5632,
                                       2048 * 5632, 2048, 2048}));
  EXPECT_EQ(u.embed, (std::vector<u64>{32000 * 2048}));
  EXPECT_EQ(u.head, (std::vector<u64>{2048, 2048 * 32000}));
  // two ranks: rank 0 holds the attention and gate projections and part of up, rank 1 the rest
  const auto r0 = flat_param_parts(u.layer, 2, 2, 0), r1 = flat_param_parts(u.layer, 2, 2, 1);
  EXPECT_EQ(r0[6], 0U);
  EXPECT_EQ(r1[0], 0U);
  EXPECT_GT(r0[5], 0U);
  EXPECT_GT(r1[5], 0U);
}

// Measured 2026-11-30 (docs/results/multi-gpu-allocator-traces-2xh200-2026-11-30, tr-fsdp1-l1b): FSDP1 llama-1b on
// two H200s reserved 14940 MiB on rank 0 and 15986 MiB on rank 1; the ranks' optimizer states
// differ in number and size, and so do the blocks the forward can reuse.
TEST(EstimatorFlatParam, Fsdp1RanksDifferAndTheDefaultIsTheLargest) {
  ModelConfig m;
  m.family = Family::Llama;
  m.hidden_size = 2048, m.num_layers = 22, m.num_heads = 32, m.num_kv_heads = 4, m.head_dim = 64;
  m.intermediate_size = 5632, m.vocab_size = 32000, m.max_positions = 2048;
  Options o;
  o.mode = Mode::Train, o.precision = Precision::Bf16, o.optimizer = Optimizer::AdamW;
  o.batch = 4, o.seq = 1024, o.gpus = 2;
  o.parallel.data = DataParallel::Fsdp, o.parallel.fsdp_version = 1;
  o.parallel.rank = 0;
  const auto r0 = estimate(m, o);
  o.parallel.rank = 1;
  const auto r1 = estimate(m, o);
  o.parallel.rank = kEveryRank;
  const auto every = estimate(m, o);
  ASSERT_TRUE(r0.ok() && r1.ok() && every.ok());
  // allocated: the replays' peaks differ by the parts' transient temporaries only (measured: equal
  // within 0.2 %)
  EXPECT_NEAR(static_cast<double>(r0->peak_allocated_bytes), static_cast<double>(r1->peak_allocated_bytes),
              0.01 * static_cast<double>(r0->peak_allocated_bytes));
  EXPECT_GT(r1->peak_reserved_bytes, r0->peak_reserved_bytes + 512 * vramdoc::MiB);
  EXPECT_EQ(every->peak_reserved_bytes, std::max(r0->peak_reserved_bytes, r1->peak_reserved_bytes));
  o.parallel.fsdp_version = 2;  // fully_shard splits every parameter evenly: ranks agree
  o.parallel.rank = 0;
  const auto f0 = estimate(m, o);
  o.parallel.rank = 1;
  const auto f1 = estimate(m, o);
  EXPECT_EQ(f0->peak_reserved_bytes, f1->peak_reserved_bytes);
}

// A model whose dense and MoE layers differ (DeepSeek's first_k_dense_replace): the experts are
// the layers' parameters, spread over every layer as the rank plan's weights are, never the
// root's (they were the embeddings' neighbours before, in FSDP1's root unit and DDP's first bucket).
TEST(EstimatorFlatParam, DenseFirstLayerExpertsStayInTheLayers) {
  const std::string dir = std::string(VRAMDOC_TEST_DATA_DIR) + "/estimator/multi-gpu-h200.configs/";
  auto m = parse_config_json(vramdoc::test::file_text(dir + "dsv2-1b.json"), "dsv2-1b");
  ASSERT_TRUE(m.ok());
  ASSERT_GT(m->dense_layers, 0U);
  const UnitParams u = unit_params(*m, 1);
  EXPECT_EQ(u.embed, (std::vector<u64>{m->vocab_size * m->hidden_size}));
  const u64 layers = total(u.layer) * m->num_layers, all = layers + total(u.embed) + total(u.head);
  Options o;
  const auto e = estimate(*m, o);
  ASSERT_TRUE(e.ok());
  EXPECT_NEAR(static_cast<double>(all), static_cast<double>(e->n_params), 1e-3 * static_cast<double>(e->n_params));
}
