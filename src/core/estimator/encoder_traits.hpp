// Reading an encoder's config.json (encoders.hpp's read_encoder_config): what encoder_config.cpp (the kind,
// family and widths, the stand-ins) and encoder_traits.cpp (each family's traits) share. Internal to those two.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/estimator/model_config.hpp"

namespace vramdoc::estimator::detail {

// An optional size, or `fallback` when absent or not a positive integer below 2^40.
std::uint64_t size_or(const nlohmann::json& cfg, const char* name, std::uint64_t fallback);
// The classifier's labels: id2label's entries, else num_labels, else 2.
std::uint64_t labels_of(const nlohmann::json& cfg);
// A decoder's layers without the causal mask: pre-norm LayerNorms, RoPE on every head, a gated MLP, no absolute
// positions, no token types (the generic encoder stand-in, ModernBERT).
void decoder_style_layers(ModelConfig& m);
// Norms, MLP, biases, dropout and the heads' pieces of m.family (its modeling_*.py), from the config's fields.
void set_encoder_traits(ModelConfig& m, const nlohmann::json& cfg);

}  // namespace vramdoc::estimator::detail
