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

// docs/estimator.md, "Several GPUs: measured": why each of these misses (every case a fresh
// process: docs/results/multi-gpu-fresh-cases-2xh200-2026-11-30, -2026-12-01 and -2026-12-01-b).
constexpr Miss kMisses[] = {
    {"ddp/llama-1b/bf16/4x1024/view", 0, 0.12, 0.11, "DDP's rebuild race: this rank still held the old buckets at the peak"},
    {"ddp/llama-1b/bf16/4x1024/bucket=100", 0, 0.12, 0.11, "DDP's rebuild race, as above"},
    {"ddp/llama-1b/bf16/4x1024/static", 1, 0.12, 0.11, "DDP's rebuild race, as above"},
    {"ddp/llama-1b/amp/2x1024/static", -1, 0.12, 0.03, "DDP's rebuild race, as above (held out)"},
    {"ddp/llama-1b/bf16/4x1024", 0, 0.12, 0.11, "DDP's rebuild race: rank 0 of one of five runs of this job"},
    {"ddp/llama-160m/amp/8x1024", 1, 0.08, 0.10, "DDP's rebuild race: rank 1 of one of five runs of this job (held out)"},
    {"ddp/llama-1b/bf16/8x1024/ckpt", -1, 0.03, 0.065,
     "the real third step takes one more 1000 MiB segment for the logits than the replay (steps 1 and 2 agree to 50 MiB)"},
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
  if (c.value("lora", false)) o.mode = Mode::Lora, o.lora_targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
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
  EXPECT_EQ(n, 134);
  EXPECT_GE(within, 125);  // docs/estimator.md's count; a change that loses cases fails here
}
