// A convolutional image classifier as its config.json describes it (transformers 5.x's ResNet, RegNet,
// ConvNeXt, ConvNeXt V2, EfficientNet and MobileNetV2 configs, their class defaults where a field is
// left out). The layers themselves are built from these fields by cnn_graph.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vramdoc::estimator {

enum class CnnArch { ResNet, RegNet, ConvNext, ConvNextV2, EfficientNet, MobileNetV2, Bit, MobileNetV1, PoolFormer, MobileViT, FocalNet };

struct CnnParts {
  CnnArch arch = CnnArch::ResNet;
  std::uint64_t channels = 3;     // num_channels
  std::uint64_t image_size = 224;  // the config's image_size (--image-size overrides it)
  std::uint64_t labels = 2;        // num_labels / id2label (transformers' default 2)
  std::string act = "relu";        // hidden_act
  // ResNet, RegNet, ConvNeXt: per stage
  std::vector<std::uint64_t> depths, widths;  // depths, hidden_sizes
  std::uint64_t stem = 64;          // embedding_size (ResNet 64, RegNet 32)
  bool bottleneck = true;           // ResNet layer_type "bottleneck" (else "basic")
  bool downsample_first = false;    // downsample_in_first_stage
  bool downsample_in_bottleneck = false;  // ResNet: the stride on the first 1x1 rather than the 3x3
  bool squeeze_excite = true;       // RegNet layer_type "y" (else "x")
  std::uint64_t groups_width = 64;  // RegNet
  std::uint64_t patch = 4;          // ConvNeXt patch_size
  bool layer_scale = true;          // ConvNeXt layer_scale_init_value > 0
  double drop_path = 0.0;           // ConvNeXt drop_path_rate
  // EfficientNet
  double width_coefficient = 2.0, depth_coefficient = 3.1, se_ratio = 0.25, dropout = 0.5, drop_connect = 0.2;
  std::uint64_t depth_divisor = 8, hidden_dim = 2560;
  std::vector<std::uint64_t> kernels, in_channels, out_channels, strides, repeats, expand_ratios;
  // MobileNetV2
  double depth_multiplier = 1.0, expand_ratio = 6.0, classifier_dropout = 0.8;
  std::uint64_t divisible_by = 8, min_depth = 8, output_stride = 32;
  bool first_layer_is_expansion = true, finegrained_output = true, tf_padding = true;
  // BiT (configuration_bit.py): GroupNorm of num_groups, weight-standardised convolutions, TF "SAME" padding
  std::uint64_t num_groups = 32;
  double width_factor = 1.0;
  bool same_padding = true;             // global_padding "SAME" (DynamicPad2d before strided convolutions)
  bool embedding_dynamic_padding = false;
  bool preactivation = true;            // layer_type "preactivation" (else "bottleneck": BiT's non-pre-activation v1.5)
  // PoolFormer (configuration_poolformer.py): per-stage patch embeddings, pooling token mixer
  std::vector<std::uint64_t> patch_sizes, patch_strides, paddings;
  std::uint64_t pool_size = 3;
  double mlp_ratio = 4.0;
  // MobileViT (configuration_mobilevit.py): neck_hidden_sizes, transformer widths in `widths` (hidden_sizes)
  std::vector<std::uint64_t> neck;
  std::uint64_t heads = 4, kernel_size = 3;
  double hidden_dropout = 0.1;
  bool qkv_bias = true;
  // FocalNet (configuration_focalnet.py): embed_dim (in `stem`), per-stage focal_levels and focal_windows
  std::vector<std::uint64_t> focal_levels, focal_windows;
  bool normalize_modulator = false, post_norm_in_modulation = false;
  // A speech encoder's convolutional feature extractor over the raw samples (wav2vec2, HuBERT, WavLM: conv_dim,
  // conv_kernel, conv_stride, conv_bias, feat_extract_norm); `audio` marks a model that has one.
  bool audio = false;
  std::vector<std::uint64_t> conv_dim, conv_kernel, conv_stride;
  bool conv_bias = false, layer_norm_features = false;  // feat_extract_norm "layer" (else "group": the first layer's GroupNorm)
};

}  // namespace vramdoc::estimator
