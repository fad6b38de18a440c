// What each model_type is made of, as transformers builds it: the family's traits (norms, MLP,
// attention layout, experts) and its own config.json fields; and the checkpoint's quantization.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/estimator/model_config.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// The family of a config.json model_type (Generic when unknown).
Family family_of(std::string_view model_type);
// Sets m's traits and reads the family's own fields (intermediate size, experts, latent attention,
// soft-capping, sliding window...). Errors name the field and `source`.
Result<bool> apply_family(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);
// Reads quantization_config (gptq, awq, bitsandbytes, fp8, fbgemm_fp8, compressed-tensors) into m.quant.
Result<bool> read_quantization(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);

}  // namespace vramdoc::estimator
