// The estimator against the two-GPU measurements (tests/data/estimator/multi-gpu-h200.jsonl, per
// rank): every case within the bar (allocated 3 %, process 5 %) except the misses listed
// below with their reason, which must still stay within the bound given (a regression fails).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/estimator/estimate.hpp"
#include "test_accuracy.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;
using vramdoc::test::rel;

namespace {

const std::string kData = std::string(VRAMDOC_TEST_DATA_DIR) + "/estimator/multi-gpu-h200";

struct Miss {
  const char* spec;  // the case (and rank, -1: both) the model is known to miss
  int rank;
  double allocated, process;  // bounds instead of 3 % / 5 %
  const char* why;
};

// docs/estimator.md, "Several GPUs: measured": why each of these misses.
constexpr Miss kMisses[] = {
    {"ddp/llama-1b/bf16/4x1024/bucket=100", -1, 0.12, 0.10, "DDP's bucket rebuild kept the old buckets (a race; not modelled without bucket view)"},
    {"ddp/llama-1b/bf16/4x1024/view", 1, 0.13, 0.11, "this rank's old buckets were released before the rebuild (a race)"},
    {"ddp/llama-1b/bf16/8x1024/ckpt", -1, 0.03, 0.11,
     "checkpointing: a later run of this case reserved 1 GiB more (+3.9 % there); the one-GPU checkpointed cases are within 2 %"},
    {"ddp/qwen2.5-0.5b/amp/2x1024/ckpt", -1, 0.03, 0.13,
     "checkpointing, as above (+12.5 % since autocast's copies are held to the loss; a later run's ranks: -1.0 % and +12.4 %)"},
    {"fsdp2/qwen2.5-0.5b/mp/2x1024/ckpt", -1, 0.03, 0.065, "checkpointing, as above"},
    {"fsdp1/llama-1b/bf16/4x1024/ckpt", 1, 0.03, 0.065, "checkpointing, as above"},
    {"tp/llama-1b/bf16/4x1024/ckpt", -1, 0.05, 0.05, "checkpointing under DTensor keeps ~0.2 GiB more at the optimizer step"},
    {"fsdp1/llama-1b/bf16/4x1024", 1, 0.03, 0.075, "this rank's reserved memory is 0.7 GiB above rank 0's"},
    {"fsdp1/llama-1b/bf16/4x1024/shard=grad_op", 1, 0.03, 0.07, "as above"},
    {"fsdp1/qwen2.5-0.5b/mp/2x1024", 0, 0.03, 0.085, "FSDP1's reserved memory on this rank: 1.3 GiB above the replay's"},
    {"fsdp1/qwen2.5-0.5b/mp/2x1024/shard=hybrid", -1, 0.03, 0.105,
     "HYBRID_SHARD makes a replicate group of one rank beside the shard group: one more NCCL communicator"},
};

const Miss* miss_for(const nlohmann::json& c) {
  for (const auto& m : kMisses) {
    if (c["spec"] == m.spec && (m.rank < 0 || c["rank"] == m.rank)) return &m;
  }
  return nullptr;
}

Options options_for(const nlohmann::json& c) {
  Options o;
  o.precision = c["precision"] == "bf16" ? Precision::Bf16 : Precision::AmpBf16;
  o.batch = c["batch"], o.seq = c["seq"], o.grad_checkpointing = c["ckpt"];
  o.gpus = c["world"];
  const std::string s = c["strategy"];
  if (s == "tp") o.tensor_parallel = o.gpus;
  if (s == "fsdp1" || s == "fsdp2") {
    o.parallel.data = DataParallel::Fsdp;
    o.parallel.fsdp_version = s == "fsdp1" ? 1 : 2;
    o.parallel.reshard_after_forward = c["reshard"] && c["shard"] != "grad_op";
  }
  o.parallel.ddp_bucket_view = c["view"];
  if (c["shard"] == "hybrid") o.parallel.shard_group = o.gpus;  // HYBRID_SHARD on one node
  o.parallel.rank = c["rank"];
  return o;
}

}  // namespace

TEST(EstimatorMultiGpuMeasured, EveryRankWithinTheBarOrItsKnownMiss) {
  std::ifstream in(kData + ".jsonl");
  ASSERT_TRUE(in.good()) << kData;
  int n = 0, within = 0;
  for (std::string line; std::getline(in, line);) {
    const auto c = nlohmann::json::parse(line);
    auto m = parse_config_json(vramdoc::test::file_text(kData + ".configs/" + c["model"].get<std::string>() + ".json"), c["model"]);
    ASSERT_TRUE(m.ok());
    auto e = estimate(*m, options_for(c));
    ASSERT_TRUE(e.ok()) << e.error();
    const Miss* miss = miss_for(c);
    const double a = rel(e->peak_allocated_bytes, c["allocated"]), p = rel(e->process_bytes, c["process"]);
    const std::string what = c["spec"].get<std::string>() + " rank " + std::to_string(c["rank"].get<int>());
    EXPECT_LT(a, miss ? miss->allocated : 0.03) << what << (miss ? std::string(": ") + miss->why : "");
    EXPECT_LT(p, miss ? miss->process : 0.05) << what << (miss ? std::string(": ") + miss->why : "");
    within += a < 0.03 && p < 0.05;
    ++n;
  }
  EXPECT_EQ(n, 48);
  EXPECT_GE(within, 31);  // docs/estimator.md's count; a change that loses cases fails here
}
