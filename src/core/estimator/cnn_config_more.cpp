// config.json -> CnnParts for round 8's vision families, with transformers 5.x's class defaults for the fields a
// config leaves out (configuration_hgnet_v2.py, configuration_textnet.py, configuration_pvt.py,
// configuration_pvt_v2.py, configuration_segformer.py, configuration_mobilevitv2.py).
#include <algorithm>

#include "core/estimator/cnn_config_read.hpp"

namespace vramdoc::estimator::cnn_read {

namespace {

// A list of booleans (HGNet-V2's stage_downsample, stage_light_block) as 0 / 1, or `fallback` when absent.
Result<std::vector<u64>> flags(const json& cfg, const char* name, const std::string& source, std::vector<u64> fallback) {
  const auto it = cfg.find(name);
  if (it == cfg.end() || it->is_null()) return fallback;
  if (!it->is_array()) return make_error("field '" + std::string(name) + "' in " + source + " is not a list of booleans");
  std::vector<u64> out;
  for (const json& v : *it) {
    if (!v.is_boolean() && !v.is_number()) return make_error("field '" + std::string(name) + "' in " + source + " holds " + v.dump() + ": expected booleans");
    out.push_back(v.is_boolean() ? v.get<bool>() : v.get<double>() != 0.0);
  }
  return out;
}

// A list of positive numbers (mlp_ratios), or `fallback` when absent.
Result<std::vector<double>> ratios(const json& cfg, const char* name, const std::string& source, std::vector<double> fallback) {
  const auto it = cfg.find(name);
  if (it == cfg.end() || it->is_null()) return fallback;
  std::vector<double> out;
  for (const json& v : it->is_array() ? *it : json::array({json()})) {
    const double d = v.is_number() ? v.get<double>() : -1.0;
    if (!std::isfinite(d) || d <= 0 || d > 64) return make_error("field '" + std::string(name) + "' in " + source + " must be a list of positive numbers up to 64");
    out.push_back(d);
  }
  return out;
}

bool lengths_match(std::size_t n, std::initializer_list<std::size_t> sizes) {
  return std::all_of(sizes.begin(), sizes.end(), [n](std::size_t s) { return s == n; });
}

// Each stage's heads divide its width (the lists' lengths already match), else `error` names both fields.
void heads_divide_widths(const CnnParts& p, const char* heads, const char* widths, const std::string& source, std::string& error) {
  for (std::size_t s = 0; s < p.widths.size(); ++s) {
    if (p.widths[s] % p.sr_heads[s] != 0) error = "field '" + std::string(heads) + "' in " + source + " does not divide " + widths;
  }
}

}  // namespace

std::optional<CnnArch> arch_by_fields(const json& cfg) {
  if (cfg.contains("stage_mid_channels") && cfg.contains("stage_numb_of_layers")) return CnnArch::HGNetV2;
  if (cfg.contains("conv_layer_kernel_sizes")) return CnnArch::TextNet;
  if (cfg.contains("base_attn_unit_dims") && cfg.contains("n_attn_blocks")) return CnnArch::MobileViTV2;
  if (cfg.contains("embed_dims") && cfg.contains("downsamples") && cfg.contains("down_patch_size")) return CnnArch::SwiftFormer;
  if (cfg.contains("kernel_qkv") && cfg.contains("stride_kv") && cfg.contains("embed_dim")) return CnnArch::Cvt;
  if (cfg.contains("masked_unit_attention") && cfg.contains("query_stride") && cfg.contains("depths")) return CnnArch::Hiera;
  const bool stages = cfg.contains("hidden_sizes") && cfg.contains("depths");
  if (stages && (cfg.contains("sr_ratios") || cfg.contains("sequence_reduction_ratios"))) return CnnArch::SpatialReductionViT;
  return std::nullopt;
}

// configuration_hgnet_v2.py's defaults (HGNetV2-B4's stages).
void read_hgnet_v2(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(sizes(cfg, "stem_channels", source, {3, 32, 48}), p.hg_stem, error);
  take(sizes(cfg, "stem_strides", source, {2, 1, 1, 2, 1}, 64), p.hg_stem_strides, error);
  take(sizes(cfg, "stage_in_channels", source, {48, 128, 512, 1024}), p.hg_in, error);
  take(sizes(cfg, "stage_mid_channels", source, {48, 96, 192, 384}), p.hg_mid, error);
  take(sizes(cfg, "stage_out_channels", source, {128, 512, 1024, 2048}), p.hg_out, error);
  take(sizes(cfg, "stage_num_blocks", source, {1, 1, 3, 1}, kMaxLayers + 1), p.hg_blocks, error);
  take(flags(cfg, "stage_downsample", source, {0, 1, 1, 1}), p.hg_downsample, error);
  take(sizes(cfg, "stage_downsample_strides", source, {2, 2, 2, 2}, 64), p.hg_downsample_strides, error);
  take(flags(cfg, "stage_light_block", source, {0, 0, 1, 1}), p.hg_light, error);
  take(sizes(cfg, "stage_kernel_size", source, {3, 3, 5, 5}, 64), p.kernels, error);
  take(sizes(cfg, "stage_numb_of_layers", source, {6, 6, 6, 6}, 257), p.hg_layers, error);
  p.learnable_affine = fields::flag(cfg, "use_learnable_affine_block", false);
  p.act = string_or(cfg, "hidden_act", "relu");
  if (!error.empty()) return;
  const std::size_t n = p.hg_in.size();
  if (p.hg_stem.size() < 3 || p.hg_stem_strides.size() < 5) {
    error = "fields 'stem_channels' (3) and 'stem_strides' (5) in " + source + " are too short for HGNet-V2";
  } else if (!lengths_match(n, {p.hg_mid.size(), p.hg_out.size(), p.hg_blocks.size(), p.hg_downsample.size(),
                                p.hg_downsample_strides.size(), p.hg_light.size(), p.kernels.size(), p.hg_layers.size()})) {
    error = "HGNet-V2's stage_* lists in " + source + " must have one entry per stage each";
  }
  p.depths = p.hg_blocks;
}

// configuration_textnet.py's defaults (TextNet-B's stages: conv_layer_kernel_sizes / conv_layer_strides when None).
void read_textnet(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  const json kernels = cfg.contains("conv_layer_kernel_sizes") && cfg["conv_layer_kernel_sizes"].is_array()
                           ? cfg["conv_layer_kernel_sizes"]
                           : json::parse("[[[3,3],[3,3],[3,3]],[[3,3],[1,3],[3,3],[3,1]],[[3,3],[3,3],[3,1],[1,3]],[[3,3],[3,1],[1,3],[3,3]]]");
  const json strides = cfg.contains("conv_layer_strides") && cfg["conv_layer_strides"].is_array()
                           ? cfg["conv_layer_strides"]
                           : json::parse("[[1,2,1],[2,1,1,1],[2,1,1,1],[2,1,1,1]]");
  const auto positive = [](const json& v) { return v.is_number_unsigned() && v.get<u64>() >= 1 && v.get<u64>() < 64; };
  const std::string bad = "fields 'conv_layer_kernel_sizes' and 'conv_layer_strides' in " + source +
                          " must be per stage lists of [kh, kw] kernels and strides of the same lengths";
  if (kernels.size() != strides.size() || kernels.empty()) error = bad;
  for (std::size_t s = 0; error.empty() && s < kernels.size(); ++s) {
    if (!kernels[s].is_array() || !strides[s].is_array() || kernels[s].size() != strides[s].size()) {
      error = bad;
      break;
    }
    p.textnet_kernels.emplace_back(), p.textnet_strides.emplace_back();
    for (std::size_t l = 0; l < kernels[s].size(); ++l) {
      const json& k = kernels[s][l];
      if (!k.is_array() || k.size() != 2 || !positive(k[0]) || !positive(k[1]) || !positive(strides[s][l])) {
        error = bad;
        break;
      }
      p.textnet_kernels.back().emplace_back(k[0].get<u64>(), k[1].get<u64>());
      p.textnet_strides.back().push_back(strides[s][l].get<u64>());
    }
  }
  take(sizes(cfg, "hidden_sizes", source, {64, 64, 128, 256, 512}), p.widths, error);
  take(size(cfg, "stem_kernel_size", source, 3, 64), p.kernel_size, error);
  take(size(cfg, "stem_stride", source, 2, 64), p.textnet_stem_stride, error);
  take(size(cfg, "stem_out_channels", source, 64), p.stem, error);
  p.act = string_or(cfg, "stem_act_func", "relu");
  if (error.empty() && p.widths.size() != p.textnet_kernels.size() + 1) {
    error = "field 'hidden_sizes' in " + source + " must have one entry more than conv_layer_kernel_sizes (the stem's width first)";
  }
  for (const auto& stage : p.textnet_kernels) p.depths.push_back(stage.size());
}

// PVT (configuration_pvt.py: sequence_reduction_ratios, position embeddings, a cls token), PVT v2
// (configuration_pvt_v2.py: sr_ratios, overlapping patch embeddings, the Mix-FFN, linear_attention) and SegFormer
// (configuration_segformer.py: PVT v2's layers through the attention interface, reshape_last_stage) with their
// classes' defaults; an unknown config with sr_ratios is read as PVT v2.
void read_spatial_reduction_vit(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  p.pvt_v1 = cfg.contains("sequence_reduction_ratios") && !cfg.contains("sr_ratios");
  // SegformerAttention runs ALL_ATTENTION_FUNCTIONS (SDPA by default): SegFormer's own config fields say so
  p.attention_interface = string_or(cfg, "model_type", "") == "segformer" || cfg.contains("reshape_last_stage") || cfg.contains("decoder_hidden_size");
  take(sizes(cfg, "depths", source, {2, 2, 2, 2}, kMaxLayers + 1), p.depths, error);
  take(sizes(cfg, "hidden_sizes", source, p.pvt_v1 ? std::vector<u64>{64, 128, 320, 512} : std::vector<u64>{32, 64, 160, 256}), p.widths, error);
  take(sizes(cfg, "num_attention_heads", source, {1, 2, 5, 8}, 1ULL << 12), p.sr_heads, error);
  take(sizes(cfg, p.pvt_v1 ? "sequence_reduction_ratios" : "sr_ratios", source, {8, 4, 2, 1}, 1ULL << 10), p.sr_ratios, error);
  take(sizes(cfg, "patch_sizes", source, p.pvt_v1 ? std::vector<u64>{4, 2, 2, 2} : std::vector<u64>{7, 3, 3, 3}, 1ULL << 10), p.patch_sizes, error);
  take(sizes(cfg, "strides", source, {4, 2, 2, 2}, 1ULL << 10), p.patch_strides, error);
  take(ratios(cfg, "mlp_ratios", source, p.attention_interface ? std::vector<double>{4, 4, 4, 4} : std::vector<double>{8, 8, 4, 4}), p.sr_mlp_ratios, error);
  p.hidden_dropout = fields::fraction(cfg, "hidden_dropout_prob", 0.0);
  p.drop_path = fields::fraction(cfg, "drop_path_rate", p.attention_interface ? 0.1 : 0.0);
  p.qkv_bias = p.attention_interface || fields::flag(cfg, "qkv_bias", true);
  p.linear_attention = fields::flag(cfg, "linear_attention", false);
  p.mix_ffn = !p.pvt_v1;
  p.reshape_last_stage = !p.attention_interface || fields::flag(cfg, "reshape_last_stage", true);
  p.act = string_or(cfg, "hidden_act", "gelu");
  if (!error.empty()) return;
  const std::size_t n = p.depths.size();
  if (n == 0 || !lengths_match(n, {p.widths.size(), p.sr_heads.size(), p.sr_ratios.size(), p.patch_sizes.size(), p.patch_strides.size(),
                                   p.sr_mlp_ratios.size()})) {
    error = "fields 'depths', 'hidden_sizes', 'num_attention_heads', the reduction ratios, 'patch_sizes', 'strides' and "
            "'mlp_ratios' in " + source + " must have one entry per stage each";
    return;
  }
  heads_divide_widths(p, "num_attention_heads", "hidden_sizes", source, error);
}

// configuration_mobilevitv2.py's defaults (MobileViTV2-1.0).
void read_mobilevit_v2(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(sizes(cfg, "base_attn_unit_dims", source, {128, 192, 256}), p.widths, error);
  take(sizes(cfg, "n_attn_blocks", source, {2, 4, 3}, kMaxLayers + 1), p.depths, error);
  take(number(cfg, "width_multiplier", source, 1.0), p.width_multiplier, error);
  take(size(cfg, "ffn_multiplier", source, 2, 64), p.ffn_multiplier, error);
  take(number(cfg, "expand_ratio", source, 2.0), p.expand_ratio, error);
  take(size(cfg, "patch_size", source, 2, 1ULL << 10), p.patch, error);
  take(size(cfg, "conv_kernel_size", source, 3, 64), p.kernel_size, error);
  take(size(cfg, "output_stride", source, 32, 1ULL << 10), p.output_stride, error);
  p.act = string_or(cfg, "hidden_act", "swish");
  if (error.empty() && (p.widths.size() < 3 || p.depths.size() < 3)) {
    error = "fields 'base_attn_unit_dims' and 'n_attn_blocks' in " + source + " need three entries (layers 3-5)";
  }
}

// configuration_swiftformer.py's defaults (SwiftFormer-XS).
void read_swiftformer(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(sizes(cfg, "depths", source, {3, 3, 6, 4}, kMaxLayers + 1), p.depths, error);
  take(sizes(cfg, "embed_dims", source, {48, 56, 112, 220}), p.widths, error);
  take(flags(cfg, "downsamples", source, {1, 1, 1, 1}), p.downsamples, error);
  take(number(cfg, "mlp_ratio", source, 4.0), p.mlp_ratio, error);
  u64 patch = 3, stride = 2, pad = 1;
  take(size(cfg, "down_patch_size", source, 3, 64), patch, error);
  take(size(cfg, "down_stride", source, 2, 64), stride, error);
  if (auto it = cfg.find("down_pad"); it != cfg.end() && it->is_number_unsigned()) pad = std::min<u64>(it->get<u64>(), 64);
  p.patch_sizes = {patch}, p.patch_strides = {stride}, p.paddings = {pad};
  p.layer_scale = fields::flag(cfg, "use_layer_scale", true);
  p.act = string_or(cfg, "hidden_act", "gelu");
  if (error.empty() && (p.depths.empty() || p.depths.size() != p.widths.size() || p.downsamples.size() + 1 < p.depths.size())) {
    error = "fields 'depths', 'embed_dims' and 'downsamples' in " + source + " must have one entry per stage each";
  }
  if (error.empty() && p.widths.front() < 2) error = "field 'embed_dims' in " + source + " starts below 2 channels";
}

// configuration_cvt.py's defaults (CvT-13). qkv_projection_method other than "dw_bn" ("avg", "linear") is read as
// dw_bn; drop_rate's largest stage is every stage's.
void read_cvt(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  take(sizes(cfg, "depth", source, {1, 2, 10}, kMaxLayers + 1), p.depths, error);
  take(sizes(cfg, "embed_dim", source, {64, 192, 384}), p.widths, error);
  take(sizes(cfg, "num_heads", source, {1, 3, 6}, 1ULL << 12), p.sr_heads, error);
  take(sizes(cfg, "patch_sizes", source, {7, 3, 3}, 1ULL << 10), p.patch_sizes, error);
  take(sizes(cfg, "patch_stride", source, {4, 2, 2}, 1ULL << 10), p.patch_strides, error);
  take(sizes(cfg, "patch_padding", source, {2, 1, 1}, 1ULL << 10, 0), p.paddings, error);
  take(sizes(cfg, "kernel_qkv", source, {3, 3, 3}, 64), p.kernels, error);
  take(sizes(cfg, "padding_q", source, {1, 1, 1}, 64, 0), p.cvt_padding_q, error);
  take(sizes(cfg, "padding_kv", source, {1, 1, 1}, 64, 0), p.cvt_padding_kv, error);
  take(sizes(cfg, "stride_q", source, {1, 1, 1}, 64), p.cvt_stride_q, error);
  take(sizes(cfg, "stride_kv", source, {2, 2, 2}, 64), p.cvt_stride_kv, error);
  take(flags(cfg, "cls_token", source, {0, 0, 1}), p.cvt_cls_token, error);
  take(flags(cfg, "qkv_bias", source, {1, 1, 1}), p.cvt_qkv_bias, error);
  take(ratios(cfg, "mlp_ratio", source, {4, 4, 4}), p.sr_mlp_ratios, error);
  std::vector<double> drop_path = {0.0, 0.0, 0.1};
  if (auto it = cfg.find("drop_path_rate"); it != cfg.end() && it->is_array()) {
    drop_path.clear();
    for (const json& v : *it) drop_path.push_back(v.is_number() ? std::clamp(v.get<double>(), 0.0, 0.99) : 0.0);
  }
  p.cvt_drop_path = drop_path;
  if (auto it = cfg.find("drop_rate"); it != cfg.end() && it->is_array()) {
    for (const json& v : *it) p.hidden_dropout = std::max(p.hidden_dropout, v.is_number() ? std::clamp(v.get<double>(), 0.0, 0.99) : 0.0);
  }
  p.act = "gelu";
  if (!error.empty()) return;
  const std::size_t n = p.depths.size();
  if (n == 0 || !lengths_match(n, {p.widths.size(), p.sr_heads.size(), p.patch_sizes.size(), p.patch_strides.size(), p.paddings.size(),
                                   p.kernels.size(), p.cvt_padding_q.size(), p.cvt_padding_kv.size(), p.cvt_stride_q.size(),
                                   p.cvt_stride_kv.size(), p.cvt_cls_token.size(), p.cvt_qkv_bias.size(), p.sr_mlp_ratios.size(),
                                   p.cvt_drop_path.size()})) {
    error = "CvT's per-stage lists (depth, embed_dim, num_heads, the patch and projection sizes, cls_token, qkv_bias, mlp_ratio, "
            "drop_path_rate) in " + source + " must have one entry per stage each";
    return;
  }
  heads_divide_widths(p, "num_heads", "embed_dim", source, error);
}

// configuration_hiera.py's defaults (Hiera-T); the 2-D sizes (patch_size, patch_stride, patch_padding) by their first
// entry, masked_unit_size and query_stride by their area.
void read_hiera(CnnParts& p, const json& cfg, const std::string& source, std::string& error) {
  const auto first = [&](const char* name, u64 fallback, u64 min) {
    const auto it = cfg.find(name);
    const json v = it != cfg.end() && it->is_array() && !it->empty() ? it->front() : it != cfg.end() ? *it : json(fallback);
    u64 out = fallback;
    take(size(json{{name, v}}, name, source, fallback, 1ULL << 10), out, error);
    if (error.empty() && out < min) error = "field '" + std::string(name) + "' in " + source + " must be at least " + std::to_string(min);
    return out;
  };
  const auto area = [&](const char* name, std::vector<u64> fallback) {
    std::vector<u64> sides;
    take(sizes(cfg, name, source, std::move(fallback), 1ULL << 10), sides, error);
    u64 product = 1;
    for (u64 v : sides) product = saturating_mul(product, v);
    return product;
  };
  take(size(cfg, "embed_dim", source, 96), p.stem, error);
  take(sizes(cfg, "depths", source, {2, 3, 16, 3}, kMaxLayers + 1), p.depths, error);
  take(sizes(cfg, "num_heads", source, {1, 2, 4, 8}, 1ULL << 12), p.sr_heads, error);
  take(flags(cfg, "masked_unit_attention", source, {1, 1, 0, 0}), p.hiera_mask_unit_attention, error);
  take(number(cfg, "mlp_ratio", source, 4.0), p.mlp_ratio, error);
  take(number(cfg, "embed_dim_multiplier", source, 2.0), p.hiera_dim_multiplier, error);
  take(size(cfg, "num_query_pool", source, 3, 64), p.hiera_query_pool, error);
  p.patch_sizes = {first("patch_size", 7, 1)}, p.patch_strides = {first("patch_stride", 4, 1)}, p.paddings = {first("patch_padding", 3, 0)};
  p.hiera_mask_unit_area = area("masked_unit_size", {8, 8});
  p.hiera_query_stride_area = area("query_stride", {2, 2});
  p.act = string_or(cfg, "hidden_act", "gelu");
  if (!error.empty()) return;
  if (p.depths.empty() || !lengths_match(p.depths.size(), {p.sr_heads.size(), p.hiera_mask_unit_attention.size()})) {
    error = "fields 'depths', 'num_heads' and 'masked_unit_attention' in " + source + " must have one entry per stage each";
  }
}

}  // namespace vramdoc::estimator::cnn_read
