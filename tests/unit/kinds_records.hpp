// Issue 28's H200 records (tests/data/estimator/SET.jsonl and SET.models/, scripts/gpu/measure_estimator_kinds*.py)
// read the one way the estimator tests need them: a set's records, one case by its id, a case's model config
// and the estimate options the case ran with. A missing or unreadable file fails the test (file_text throws).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_config.hpp"
#include "test_accuracy.hpp"
#include "test_files.hpp"

namespace vramdoc::test {

inline std::string kinds_path(const std::string& set) {
  return std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/estimator/" + set;
}

// Every record of `set` (the environment line, cases, max-batch summaries).
inline std::vector<nlohmann::json> kinds_records(const std::string& set) {
  std::vector<nlohmann::json> out;
  std::stringstream in(file_text(kinds_path(set) + ".jsonl"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

// A case that ran and was measured (not lost to an error, not a max-batch trial or summary).
inline bool kinds_measured(const nlohmann::json& r) {
  const std::string kind = r.value("kind", "");
  return r.contains("case_id") && !r.contains("error") && kind != "maxbatch-trial" && kind != "maxbatch";
}

inline nlohmann::json kinds_record(const std::string& set, const std::string& case_id) {
  for (auto& r : kinds_records(set))
    if (r.value("case_id", "") == case_id) return r;
  ADD_FAILURE() << case_id << " not in " << set;
  return nlohmann::json::object();
}

inline nlohmann::json kinds_model_file(const std::string& set, const std::string& name, const std::string& task) {
  return nlohmann::json::parse(file_text(kinds_path(set) + ".models/" + name + "." + task + ".json"));
}

inline estimator::ModelConfig kinds_model(const std::string& set, const std::string& name, const std::string& task) {
  auto m = estimator::parse_config_json(kinds_model_file(set, name, task)["config"].dump(), name);
  EXPECT_TRUE(m.ok()) << name << ": " << (m.ok() ? "" : m.error());
  return m.ok() ? *m : estimator::ModelConfig{};
}

inline estimator::ModelConfig kinds_model(const std::string& set, const nlohmann::json& r) {
  return kinds_model(set, r["model"], r["task"]);
}

// The options the case ran with: mode, precision, task, attention, optimizer, shapes, generate()'s new tokens,
// the decoder's and image's sizes, and the Linears PEFT wrapped in a LoRA case.
inline estimator::Options kinds_options(const nlohmann::json& r) {
  using namespace estimator;
  Options o;
  o.mode = *parse_mode(r["mode"].get<std::string>());
  std::string precision = r["precision"];
  std::replace(precision.begin(), precision.end(), '_', '-');
  o.precision = *parse_precision(precision);
  o.task = *parse_task(r["task"].get<std::string>());
  if (r.value("attn_implementation", "") == "eager" || r["attention"].is_string()) o.attention = Attention::Eager;
  o.attention_given = true;  // the record says what ran (a stand-in's eager default does not apply)
  if (r["optimizer"].is_string()) o.optimizer = *parse_optimizer(r["optimizer"].get<std::string>());
  o.batch = r["batch"], o.seq = r["seq"], o.grad_checkpointing = r["grad_checkpointing"];
  o.new_tokens = r.value("generate", 0), o.target_seq = r.value("target_seq", 0), o.image_size = r.value("image_size", 0);
  if (r.contains("lora")) o.lora_targets = r["lora"]["targets"].get<std::vector<std::string>>();
  return o;
}

struct CaseBound {
  double allocated = 0, process = 0;  // the largest |relative error| of the peak allocated and the driver's number
};

// Every case of `set` named in `cases` estimated from its model and options, within its bounds; with
// `exact_params` its parameter count equals what transformers built.
inline void expect_cases_within(const std::string& set, const std::map<std::string, CaseBound>& cases,
                                bool exact_params = false) {
  for (const auto& [id, bound] : cases) {
    const auto r = kinds_record(set, id);
    if (!r.contains("model")) continue;  // kinds_record said it is missing
    const auto e = estimator::estimate(kinds_model(set, r), kinds_options(r));
    ASSERT_TRUE(e.ok()) << id << ": " << (e.ok() ? "" : e.error());
    if (exact_params) {
      EXPECT_EQ(e->n_params, r["n_params"].get<std::uint64_t>()) << id;
    }
    EXPECT_LE(rel(e->peak_allocated_bytes, r["peak_allocated"].get<double>()), bound.allocated) << id << " allocated";
    EXPECT_LE(rel(e->process_bytes, r["driver_process_used"].get<double>()), bound.process) << id << " process";
  }
}

}  // namespace vramdoc::test
