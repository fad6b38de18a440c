// Convolutional image classifiers from their config.json (ResNet, RegNet, ConvNeXt, ConvNeXt V2,
// EfficientNet, MobileNetV2; an unknown model_type with per-stage `depths` and `hidden_sizes` as a
// ConvNeXt-style stand-in): reading the config (cnn_config.cpp) and estimating a training or inference
// step op by op (forward_cnn.cpp, estimate_cnn.cpp). docs/estimator.md, "Round 4: CNNs and every other kind".
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// True for a CNN's model_type, or an unknown one whose config has per-stage depths and hidden_sizes
// and no attention heads of a transformer.
bool is_cnn_config(std::string_view model_type, const nlohmann::json& cfg);
// Fills m (kind Cnn, family Cnn, m.cnn, its parameter count's layers) from the config; clear errors
// for sizes that are not positive integers or absurd.
Result<bool> read_cnn_config(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);
// A speech encoder's convolutional feature extractor (wav2vec2-style conv_dim, conv_kernel, conv_stride) into
// m.cnn (audio set); nothing when the config has no conv_dim.
Result<bool> read_audio_features(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);
// A speech encoder: its transformer encoder as estimated for m's other fields, plus the feature extractor's
// feature maps over --seq frames' samples (estimate_speech.cpp).
Result<Estimate> estimate_speech(const ModelConfig& m, const Options& o);
// A config that names an image (image_size, num_channels, patch sizes, an ...ForImageClassification class).
bool looks_like_vision(const nlohmann::json& cfg);
// A vision-looking config that no reader could read (`why`): m becomes the generic CNN stand-in (ConvNeXt-T's stages
// at the config's image size, channels and labels), stand_in set, with a warning naming `why`; never refused.
Result<bool> read_vision_fallback(ModelConfig& m, const nlohmann::json& cfg, const std::string& source, const std::string& why);
// The CNN's name for messages ("resnet", ...).
std::string_view cnn_arch_name(CnnArch arch);
// Parameters of the classifier (sum of p.numel() over model.parameters()), at the config's image size.
Result<std::uint64_t> cnn_parameters(const ModelConfig& m);
// The step's memory (training or inference, one GPU), op by op.
Result<Estimate> estimate_cnn(const ModelConfig& m, const Options& o);

}  // namespace vramdoc::estimator
