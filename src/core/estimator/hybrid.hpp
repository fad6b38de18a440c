// Hybrid decoders: a token mixer per layer that is not always attention, read by mechanism from the config's
// fields (hybrid_config.cpp): LFM2's short convolutions (layer_types "conv" with conv_L_cache: Lfm2ShortConv in
// modeling_lfm2.py) and Jamba's Mamba layers (attn_layer_period / attn_layer_offset with mamba_d_state:
// JambaMambaMixer in modeling_jamba.py), Bamba's Mamba2 layers (attn_layer_indices with mamba_n_heads: BambaMixer in
// modeling_bamba.py, round 7's Mamba2 mixer), and Jamba's experts every expert_layer_period layers. The layers op by op:
// forward_hybrid.cpp.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/estimator/architecture.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// Reads m.layer_mixer (and for Jamba and Bamba m.ssm; Jamba's m.layer_moe) after the family's other fields; a config with neither
// mechanism is left as it is. Errors name the field and `source`.
Result<bool> read_hybrid_layers(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);
// How many of the model's layers have `mixer` (every layer is attention in a model that is no hybrid).
std::uint64_t mixer_layers(const ModelConfig& m, Mixer mixer);
// Whether a layer of mixer `layer` holds `mixer`'s tensors (Falcon-H1's parallel layer: attention's and Mamba's).
bool has_mixer(Mixer layer, Mixer mixer);
// A hybrid's weights: the attention tensors from `attention_first` on (added for every layer) moved to the attention
// layers, then the short convolutions' or the Mamba mixers' tensors of their layers.
void add_mixer_weights(const ModelConfig& m, std::size_t attention_first, std::vector<WeightTensor>& w);

}  // namespace vramdoc::estimator
