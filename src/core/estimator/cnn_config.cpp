// config.json -> CnnParts for the convolutional classifiers, with transformers 5.x's class defaults
// (configuration_resnet.py, configuration_regnet.py, configuration_convnext.py, configuration_convnextv2.py,
// configuration_efficientnet.py, configuration_mobilenet_v2.py) for the fields a config leaves out.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "core/estimator/cnn.hpp"
#include "core/estimator/cnn_graph.hpp"
#include "core/estimator/cnn_config_read.hpp"
#include "core/estimator/config_fields.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;
using u64 = std::uint64_t;
using namespace cnn_read;

struct CnnType {
  std::string_view model_type;
  CnnArch arch;
};
constexpr std::array<CnnType, 20> kCnnTypes = {{{"resnet", CnnArch::ResNet},
                                                {"regnet", CnnArch::RegNet},
                                                {"convnext", CnnArch::ConvNext},
                                                {"convnextv2", CnnArch::ConvNextV2},
                                                {"efficientnet", CnnArch::EfficientNet},
                                                {"mobilenet_v2", CnnArch::MobileNetV2},
                                                {"bit", CnnArch::Bit},
                                                {"mobilenet_v1", CnnArch::MobileNetV1},
                                                {"poolformer", CnnArch::PoolFormer},
                                                {"mobilevit", CnnArch::MobileViT},
                                                {"focalnet", CnnArch::FocalNet},
                                                {"hgnet_v2", CnnArch::HGNetV2},
                                                {"textnet", CnnArch::TextNet},
                                                {"pvt", CnnArch::SpatialReductionViT},
                                                {"pvt_v2", CnnArch::SpatialReductionViT},
                                                {"segformer", CnnArch::SpatialReductionViT},
                                                {"mobilevitv2", CnnArch::MobileViTV2},
                                                {"swiftformer", CnnArch::SwiftFormer},
                                                {"cvt", CnnArch::Cvt},
                                                {"hiera", CnnArch::Hiera}}};

void read_stages(CnnParts& p, const json& cfg, const std::string& source, std::vector<u64> depths, std::vector<u64> widths,
                 std::string& error) {
  take(sizes(cfg, "depths", source, std::move(depths), kMaxLayers + 1), p.depths, error);
  take(sizes(cfg, "hidden_sizes", source, std::move(widths)), p.widths, error);
  if (error.empty() && (p.depths.empty() || p.depths.size() != p.widths.size())) {
    error = "fields 'depths' and 'hidden_sizes' in " + source + " must be lists of the same length (one entry per stage)";
  }
}

void read_efficientnet(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(number(cfg, "width_coefficient", source, 2.0), p.width_coefficient, error);
  take(number(cfg, "depth_coefficient", source, 3.1), p.depth_coefficient, error);
  take(size(cfg, "depth_divisor", source, 8), p.depth_divisor, error);
  take(size(cfg, "hidden_dim", source, 2560), p.hidden_dim, error);
  take(sizes(cfg, "kernel_sizes", source, {3, 3, 5, 3, 5, 5, 3}, 64), p.kernels, error);
  take(sizes(cfg, "in_channels", source, {32, 16, 24, 40, 80, 112, 192}), p.in_channels, error);
  take(sizes(cfg, "out_channels", source, {16, 24, 40, 80, 112, 192, 320}), p.out_channels, error);
  take(sizes(cfg, "strides", source, {1, 2, 2, 2, 1, 2, 1}, 3), p.strides, error);
  take(sizes(cfg, "num_block_repeats", source, {1, 2, 2, 3, 3, 4, 1}, 65), p.repeats, error);
  take(sizes(cfg, "expand_ratios", source, {1, 6, 6, 6, 6, 6, 6}, 65), p.expand_ratios, error);
  take(number(cfg, "squeeze_expansion_ratio", source, 0.25, 1.0), p.se_ratio, error);
  p.dropout = fields::fraction(cfg, "dropout_rate", 0.5);
  p.drop_connect = fields::fraction(cfg, "drop_connect_rate", 0.2);
  if (!error.empty()) return;
  const std::size_t n = p.in_channels.size();
  for (const auto* list : {&p.kernels, &p.out_channels, &p.strides, &p.repeats, &p.expand_ratios}) {
    if (list->size() != n) {
      error = "EfficientNet's kernel_sizes, in_channels, out_channels, strides, num_block_repeats and expand_ratios in " +
              source + " must have one entry per stage each";
      return;
    }
  }
  double blocks = 0;
  for (u64 r : p.repeats) blocks += std::ceil(p.depth_coefficient * static_cast<double>(r));
  if (blocks > static_cast<double>(kMaxLayers)) error = "EfficientNet in " + source + " has more than " + std::to_string(kMaxLayers) + " blocks";
}

void read_mobilenet_v2(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(number(cfg, "depth_multiplier", source, 1.0), p.depth_multiplier, error);
  take(number(cfg, "expand_ratio", source, 6.0), p.expand_ratio, error);
  take(size(cfg, "depth_divisible_by", source, 8), p.divisible_by, error);
  take(size(cfg, "min_depth", source, 8), p.min_depth, error);
  take(size(cfg, "output_stride", source, 32, 1ULL << 10), p.output_stride, error);
  p.first_layer_is_expansion = fields::flag(cfg, "first_layer_is_expansion", true);
  p.finegrained_output = fields::flag(cfg, "finegrained_output", true);
  p.tf_padding = fields::flag(cfg, "tf_padding", true);
  p.classifier_dropout = fields::fraction(cfg, "classifier_dropout_prob", 0.8);
}

// configuration_bit.py's defaults: GroupNorm of 32, layer_type "preactivation", global_padding None.
void read_bit(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  read_stages(p, cfg, source, {3, 4, 6, 3}, {256, 512, 1024, 2048}, error);
  take(size(cfg, "embedding_size", source, 64), p.stem, error);
  take(size(cfg, "num_groups", source, 32), p.num_groups, error);
  take(number(cfg, "width_factor", source, 1.0), p.width_factor, error);
  take(size(cfg, "output_stride", source, 32, 1ULL << 10), p.output_stride, error);
  std::string padding = string_or(cfg, "global_padding", "");
  std::transform(padding.begin(), padding.end(), padding.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  p.same_padding = padding == "SAME";
  p.embedding_dynamic_padding = fields::flag(cfg, "embedding_dynamic_padding", false);
  p.preactivation = string_or(cfg, "layer_type", "preactivation") != "bottleneck";
  p.drop_path = fields::fraction(cfg, "drop_path_rate", 0.0);
  p.act = string_or(cfg, "hidden_act", "relu");
}

// configuration_poolformer.py's defaults (PoolFormer-S12).
void read_poolformer(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  read_stages(p, cfg, source, {2, 2, 6, 2}, {64, 128, 320, 512}, error);
  take(sizes(cfg, "patch_sizes", source, {7, 3, 3, 3}, 1ULL << 10), p.patch_sizes, error);
  take(sizes(cfg, "strides", source, {4, 2, 2, 2}, 1ULL << 10), p.patch_strides, error);
  take(sizes(cfg, "padding", source, {2, 1, 1, 1}, 1ULL << 10, 0), p.paddings, error);
  take(size(cfg, "pool_size", source, 3, 1ULL << 10), p.pool_size, error);
  take(number(cfg, "mlp_ratio", source, 4.0), p.mlp_ratio, error);
  p.layer_scale = fields::flag(cfg, "use_layer_scale", true);
  p.drop_path = fields::fraction(cfg, "drop_path_rate", 0.0);
  p.act = string_or(cfg, "hidden_act", "gelu");
  if (error.empty() && (p.patch_sizes.size() < p.depths.size() || p.patch_strides.size() < p.depths.size() ||
                        p.paddings.size() < p.depths.size())) {
    error = "fields 'patch_sizes', 'strides' and 'padding' in " + source + " must have one entry per stage";
  }
}

// configuration_mobilevit.py's defaults (MobileViT-S).
void read_mobilevit(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(sizes(cfg, "neck_hidden_sizes", source, {16, 32, 64, 96, 128, 160, 640}), p.neck, error);
  take(sizes(cfg, "hidden_sizes", source, {144, 192, 240}), p.widths, error);
  take(size(cfg, "num_attention_heads", source, 4, 1ULL << 12), p.heads, error);
  take(size(cfg, "patch_size", source, 2, 1ULL << 10), p.patch, error);
  take(size(cfg, "conv_kernel_size", source, 3, 64), p.kernel_size, error);
  take(number(cfg, "mlp_ratio", source, 2.0), p.mlp_ratio, error);
  take(number(cfg, "expand_ratio", source, 4.0), p.expand_ratio, error);
  p.hidden_dropout = fields::fraction(cfg, "hidden_dropout_prob", 0.1);
  p.classifier_dropout = fields::fraction(cfg, "classifier_dropout_prob", 0.1);
  p.qkv_bias = fields::flag(cfg, "qkv_bias", true);
  p.act = string_or(cfg, "hidden_act", "silu");
  if (error.empty() && (p.neck.size() < 6 || p.widths.size() < 3)) {
    error = "fields 'neck_hidden_sizes' (6 or 7 widths) and 'hidden_sizes' (3) in " + source + " are too short for MobileViT";
  }
  if (error.empty()) {
    for (u64 w : p.widths) {
      if (w % p.heads != 0) error = "field 'num_attention_heads' in " + source + " does not divide hidden_sizes";
    }
  }
  p.depths = {2, 4, 3};  // MobileViTEncoder's transformer layers per MobileViTLayer (modelling code, not config)
}

// configuration_focalnet.py's defaults (FocalNet-T).
void read_focalnet(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(sizes(cfg, "depths", source, {2, 2, 6, 2}, kMaxLayers + 1), p.depths, error);
  take(size(cfg, "embed_dim", source, 96), p.stem, error);
  take(size(cfg, "patch_size", source, 4, 1ULL << 10), p.patch, error);
  take(sizes(cfg, "focal_levels", source, std::vector<u64>(p.depths.size(), 2), 64, 0), p.focal_levels, error);
  take(sizes(cfg, "focal_windows", source, std::vector<u64>(p.depths.size(), 3), 64), p.focal_windows, error);
  take(number(cfg, "mlp_ratio", source, 4.0), p.mlp_ratio, error);
  p.layer_scale = fields::flag(cfg, "use_layerscale", false);
  p.normalize_modulator = fields::flag(cfg, "normalize_modulator", false);
  p.post_norm_in_modulation = fields::flag(cfg, "use_post_layernorm_in_modulation", false);
  p.drop_path = fields::fraction(cfg, "drop_path_rate", 0.1);
  p.act = string_or(cfg, "hidden_act", "gelu");
  if (error.empty() && (p.depths.empty() || p.focal_levels.size() < p.depths.size() || p.focal_windows.size() < p.depths.size())) {
    error = "fields 'focal_levels' and 'focal_windows' in " + source + " must have one entry per stage of 'depths'";
  }
  for (std::size_t s = 0; error.empty() && s < p.depths.size(); ++s) p.widths.push_back(saturating_mul(p.stem, 1ULL << std::min<std::size_t>(s, 20)));
}

}  // namespace

std::string_view cnn_arch_name(CnnArch arch) {
  for (const auto& t : kCnnTypes) {
    if (t.arch == arch) return t.model_type;
  }
  return "cnn";
}

bool is_cnn_config(std::string_view model_type, const json& cfg) {
  for (const auto& t : kCnnTypes) {
    if (t.model_type == model_type) return true;
  }
  if (arch_by_fields(cfg)) return true;  // a mechanism cnn_config_more.cpp reads (HGNet-V2, TextNet, PVT, MobileViT V2, SwiftFormer, CvT, Hiera)
  // an unknown hierarchical model with stages and no transformer heads (a CNN of another name)
  if (cfg.contains("pool_size") && cfg.contains("hidden_sizes")) return true;  // a pooling token mixer (PoolFormer-style)
  if (cfg.contains("focal_levels") && cfg.contains("depths")) return true;     // focal modulation (FocalNet-style)
  const auto heads = cfg.find("num_attention_heads");
  const bool stages = cfg.contains("depths") && cfg.contains("hidden_sizes") && (heads == cfg.end() || heads->is_null()) &&
                      !cfg.contains("num_heads") && !cfg.contains("hidden_size");
  return stages || cfg.contains("neck_hidden_sizes");  // MobileViT: convolutions around small transformers
}

Result<bool> read_cnn_config(ModelConfig& m, const json& cfg, const std::string& source) {
  CnnParts p;
  bool known = false;
  for (const auto& t : kCnnTypes) {
    if (t.model_type == m.model_type) p.arch = t.arch, known = true;
  }
  if (!known) {  // the stand-in, by what the config holds: a pooling mixer, GroupNorm with weight standardisation, else
    // ConvNeXt-style stages of width hidden_sizes with a 4x MLP per layer
    const std::string layer_type = string_or(cfg, "layer_type", "");
    p.arch = arch_by_fields(cfg)                                                ? *arch_by_fields(cfg)
             : cfg.contains("focal_levels")                                       ? CnnArch::FocalNet
             : cfg.contains("neck_hidden_sizes") && cfg.contains("hidden_sizes") ? CnnArch::MobileViT
             : cfg.contains("pool_size")                                     ? CnnArch::PoolFormer
             : cfg.contains("global_padding") || (cfg.contains("num_groups") && (layer_type == "bottleneck" || layer_type == "preactivation"))
                 ? CnnArch::Bit
                 : CnnArch::ConvNext;
  }
  std::string error;
  take(size(cfg, "num_channels", source, 3, 1ULL << 12), p.channels, error);
  const u64 default_side = p.arch == CnnArch::EfficientNet ? 600 : p.arch == CnnArch::TextNet ? 640 : p.arch == CnnArch::MobileViTV2 ? 256 : 224;
  if (auto it = cfg.find("image_size"); it != cfg.end() && it->is_array() && !it->empty()) {  // [height, width] (TextNet, PVT v2)
    take(size(json{{"image_size", it->front()}}, "image_size", source, default_side, kMaxImageSide), p.image_size, error);
  } else {
    take(size(cfg, "image_size", source, default_side, kMaxImageSide), p.image_size, error);
  }
  p.labels = labels_of(cfg);
  switch (p.arch) {
    case CnnArch::ResNet:
      read_stages(p, cfg, source, {3, 4, 6, 3}, {256, 512, 1024, 2048}, error);
      take(size(cfg, "embedding_size", source, 64), p.stem, error);
      p.bottleneck = string_or(cfg, "layer_type", "bottleneck") == "bottleneck";
      p.downsample_first = fields::flag(cfg, "downsample_in_first_stage", false);
      p.downsample_in_bottleneck = fields::flag(cfg, "downsample_in_bottleneck", false);
      p.act = string_or(cfg, "hidden_act", "relu");
      break;
    case CnnArch::RegNet:
      read_stages(p, cfg, source, {2, 6, 12, 2}, {128, 192, 512, 1088}, error);
      take(size(cfg, "embedding_size", source, 32), p.stem, error);
      take(size(cfg, "groups_width", source, 64), p.groups_width, error);
      p.squeeze_excite = string_or(cfg, "layer_type", "y") != "x";
      p.downsample_first = fields::flag(cfg, "downsample_in_first_stage", true);
      p.act = string_or(cfg, "hidden_act", "relu");
      break;
    case CnnArch::ConvNext:
    case CnnArch::ConvNextV2: {
      std::vector<u64> depths = {3, 3, 9, 3};
      if (!known && !cfg.contains("depths")) {  // MobileViT: two layers a stage (its modelling code has 2, 4, 3)
        auto widths = sizes(cfg, "hidden_sizes", source, {96, 192, 384, 768});
        if (widths) depths.assign(widths->size(), 2);
      }
      read_stages(p, cfg, source, depths, {96, 192, 384, 768}, error);
      take(size(cfg, "patch_size", source, 4, 1ULL << 10), p.patch, error);
      const auto scale = cfg.find("layer_scale_init_value");
      p.layer_scale = scale == cfg.end() || !scale->is_number() || scale->get<double>() > 0;
      p.drop_path = fields::fraction(cfg, "drop_path_rate", 0.0);
      p.act = string_or(cfg, "hidden_act", "gelu");
      break;
    }
    case CnnArch::EfficientNet:
      read_efficientnet(p, cfg, source, error);
      p.act = string_or(cfg, "hidden_act", "swish");
      break;
    case CnnArch::MobileNetV2:
      read_mobilenet_v2(p, cfg, source, error);
      p.act = string_or(cfg, "hidden_act", "relu6");
      break;
    case CnnArch::MobileNetV1:  // configuration_mobilenet_v1.py: depth_multiplier, min_depth, tf_padding
      take(number(cfg, "depth_multiplier", source, 1.0), p.depth_multiplier, error);
      take(size(cfg, "min_depth", source, 8), p.min_depth, error);
      p.tf_padding = fields::flag(cfg, "tf_padding", true);
      p.classifier_dropout = fields::fraction(cfg, "classifier_dropout_prob", 0.999);
      p.act = string_or(cfg, "hidden_act", "relu6");
      break;
    case CnnArch::Bit: read_bit(p, cfg, source, error); break;
    case CnnArch::PoolFormer: read_poolformer(p, cfg, source, error); break;
    case CnnArch::MobileViT: read_mobilevit(p, cfg, source, error); break;
    case CnnArch::FocalNet: read_focalnet(p, cfg, source, error); break;
    case CnnArch::HGNetV2: read_hgnet_v2(p, cfg, source, error); break;
    case CnnArch::TextNet: read_textnet(p, cfg, source, error); break;
    case CnnArch::SpatialReductionViT: read_spatial_reduction_vit(p, cfg, source, error); break;
    case CnnArch::MobileViTV2: read_mobilevit_v2(p, cfg, source, error); break;
    case CnnArch::SwiftFormer: read_swiftformer(p, cfg, source, error); break;
    case CnnArch::Cvt: read_cvt(p, cfg, source, error); break;
    case CnnArch::Hiera: read_hiera(p, cfg, source, error); break;
  }
  if (!error.empty()) return make_error(error);
  u64 depth = 0;
  for (u64 d : p.depths) depth = saturating_add(depth, d);
  if (depth > kMaxLayers) return make_error("the stages in " + source + " have " + std::to_string(depth) + " layers: vramdoc estimates at most " + std::to_string(kMaxLayers));
  m.kind = ModelKind::Cnn, m.family = Family::Cnn, m.cnn = p;
  m.stand_in = !known;
  // the graph at the config's own size: an image too small for the network, or absurd widths, fail here
  auto graph = build_cnn_graph(p, p.image_size, false);
  if (!graph) return make_error(graph.error() + " in " + source);
  m.num_layers = graph->layers;
  if (!known) {
    m.warnings.push_back("unknown model_type '" + m.model_type + "' in " + source +
                         ": estimated as a generic CNN (" + std::string(p.arch == CnnArch::HGNetV2 ? "HGNet-V2-style aggregation stages"
                                                            : p.arch == CnnArch::TextNet ? "TextNet-style re-parameterisable conv stages"
                                                            : p.arch == CnnArch::SpatialReductionViT ? "PVT-style spatial-reduction attention stages"
                                                            : p.arch == CnnArch::MobileViTV2 ? "MobileViT V2-style separable attention"
                                                            : p.arch == CnnArch::SwiftFormer ? "SwiftFormer-style additive attention"
                                                            : p.arch == CnnArch::Cvt ? "CvT-style convolutional-projection attention"
                                                            : p.arch == CnnArch::Hiera ? "Hiera-style mask unit attention"
                                                            : p.arch == CnnArch::FocalNet     ? "FocalNet-style focal modulation stages"
                                                            : p.arch == CnnArch::MobileViT    ? "MobileViT-style convolutions around transformers"
                                                            : p.arch == CnnArch::PoolFormer ? "PoolFormer-style pooling stages"
                                                            : p.arch == CnnArch::Bit ? "BiT-style weight-standardised ResNet stages"
                                                                                     : "ConvNeXt-style stages") +
                         " of its depths and hidden_sizes): expect +-30 %");
  }
  return true;
}

bool looks_like_vision(const json& cfg) {
  if (auto it = cfg.find("architectures"); it != cfg.end() && it->is_array()) {
    for (const auto& a : *it) {
      if (a.is_string() && a.get<std::string>().find("ForImageClassification") != std::string::npos) return true;
    }
  }
  return cfg.contains("image_size") || cfg.contains("num_channels") || cfg.contains("patch_size") || cfg.contains("patch_sizes") ||
         cfg.contains("patch_stride");
}

Result<bool> read_vision_fallback(ModelConfig& m, const json& cfg, const std::string& source, const std::string& why) {
  json plain = json::object();  // only the image's fields: ConvNeXt-T's stages (configuration_convnext.py's defaults)
  for (const char* name : {"num_channels", "num_labels", "id2label"}) {
    if (auto it = cfg.find(name); it != cfg.end()) plain[name] = *it;
  }
  if (auto it = cfg.find("image_size"); it != cfg.end() && it->is_number_unsigned()) plain["image_size"] = *it;
  const std::string model_type = m.model_type;
  m = ModelConfig{};
  m.name = source, m.model_type = model_type.empty() ? "unknown" : model_type;
  if (auto ok = read_cnn_config(m, plain, source); !ok) return make_error(why);
  m.warnings.clear();
  m.warnings.push_back("model_type '" + m.model_type + "' in " + source + " did not read as any model (" + why +
                       "): estimated as a generic vision model (ConvNeXt-T's stages): expect +-30 %");
  return true;
}

Result<bool> read_audio_features(ModelConfig& m, const json& cfg, const std::string& source) {
  if (!cfg.contains("conv_dim")) return true;
  CnnParts& p = m.cnn;
  std::string error;
  take(sizes(cfg, "conv_dim", source, {512, 512, 512, 512, 512, 512, 512}), p.conv_dim, error);
  take(sizes(cfg, "conv_kernel", source, {10, 3, 3, 3, 3, 2, 2}, 1ULL << 12), p.conv_kernel, error);
  take(sizes(cfg, "conv_stride", source, {5, 2, 2, 2, 2, 2, 2}, 1ULL << 8), p.conv_stride, error);
  if (!error.empty()) return make_error(error);
  if (p.conv_dim.empty() || p.conv_kernel.size() != p.conv_dim.size() || p.conv_stride.size() != p.conv_dim.size() ||
      p.conv_dim.size() > 64) {
    return make_error("fields 'conv_dim', 'conv_kernel' and 'conv_stride' in " + source + " must be lists of one entry per layer (at most 64)");
  }
  p.conv_bias = fields::flag(cfg, "conv_bias", false);
  p.layer_norm_features = string_or(cfg, "feat_extract_norm", "group") == "layer";
  p.audio = true;
  return true;
}

Result<std::uint64_t> cnn_parameters(const ModelConfig& m) {
  auto graph = build_cnn_graph(m.cnn, m.cnn.image_size, false);
  if (!graph) return make_error(graph.error());
  return graph->params;
}

}  // namespace vramdoc::estimator
