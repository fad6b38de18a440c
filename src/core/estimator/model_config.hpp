// A decoder-only language model as the estimator sees it: the few config.json fields that size
// its tensors. Read from Hugging Face config.json text, a preset, or a model directory.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::estimator {

// The architecture families whose tensors and saved activations are described in architecture.cpp.
enum class Family { Llama, Mistral, Qwen2, Qwen3, Gemma, Phi3, Gpt2, Mixtral, Generic };

struct ModelConfig {
  std::string name;                // a preset name, or the file it was read from
  std::string model_type;          // as config.json says (e.g. "qwen2")
  Family family = Family::Generic;
  std::uint64_t hidden_size = 0;
  std::uint64_t num_layers = 0;
  std::uint64_t num_heads = 0;
  std::uint64_t num_kv_heads = 0;
  std::uint64_t head_dim = 0;           // explicit in the config, or hidden_size / num_heads
  std::uint64_t intermediate_size = 0;
  std::uint64_t vocab_size = 0;
  std::uint64_t max_positions = 0;      // learned position table rows (gpt2 only), else 0
  std::uint64_t sliding_window = 0;     // 0: every layer attends to the whole sequence
  std::uint64_t num_experts = 0;        // mixture of experts: experts per layer (0: dense)
  std::uint64_t experts_per_token = 0;
  bool tie_word_embeddings = false;
  bool attention_bias = false;          // q/k/v projections carry a bias (qwen2 always)
  double attention_dropout = 0.0;       // > 0 in training keeps dropout masks alive (gpt2)
  double residual_dropout = 0.0;
  std::vector<std::string> warnings;    // e.g. "unknown model_type 'foo': generic decoder"
};

// Parses config.json text. `source` names the file in error messages. Every size must be a
// positive integer below 2^40; heads must divide the hidden size unless head_dim is explicit.
Result<ModelConfig> parse_config_json(std::string_view text, const std::string& source);

// The family name the estimator uses for `family` ("llama", ..., "generic decoder").
std::string_view family_name(Family family);

}  // namespace vramdoc::estimator
