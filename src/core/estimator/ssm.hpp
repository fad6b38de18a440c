// State-space decoders (Mamba, FalconMamba, Mamba2): their config fields and weights, read by mechanism from
// MambaConfig's fields (state_size, expand, conv_kernel, time_step_rank, use_conv_bias, use_bias, residual_in_fp32).
// Mamba2 adds num_heads, head_dim, n_groups, chunk_size (Mamba2Config). The layer op by op: forward_ssm.cpp,
// forward_ssm2.cpp (Mamba2).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/estimator/architecture.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// Reads m.ssm (and intermediate_size) from a Mamba-style config; errors name the field and `source`.
Result<bool> read_ssm_config(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);
// A Mamba mixer's dt_rank from `field` (MambaConfig's time_step_rank, JambaConfig's mamba_dt_rank): "auto" (or absent)
// is math.ceil(hidden_size / 16), else a positive integer; an error names the field and `source`.
Result<std::uint64_t> read_dt_rank(const nlohmann::json& cfg, const char* field, std::uint64_t hidden_size, const std::string& source);
// The weights of a Mamba-style model in model.parameters() order: embeddings, each layer's mixer and norm, norm_f,
// the (tied) lm_head.
void add_ssm_weights(const ModelConfig& m, std::vector<WeightTensor>& w);

}  // namespace vramdoc::estimator
