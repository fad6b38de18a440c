// transformers' attribute_map aliases and derived fields for configs of model types the estimator does
// not know (docs/estimator.md, "Round 4: CNNs and every other kind"): the canonical field names
// (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, vocab_size) filled in from the
// names each configuration_*.py uses, so that such a config is estimated as the nearest generic model,
// never refused for a field it spells differently.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vramdoc::estimator {

// Adds the canonical fields `cfg` lacks from their aliases (never overwriting one it has); returns what
// had to be assumed (no attention heads, no vocabulary), one sentence each, for the warnings. For
// model types the estimator does not know only: a known family reads its own names.
std::vector<std::string> add_alias_fields(nlohmann::json& cfg, const std::string& source);

}  // namespace vramdoc::estimator
