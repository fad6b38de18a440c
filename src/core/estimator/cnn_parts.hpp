// A convolutional image classifier as its config.json describes it (transformers 5.x's ResNet, RegNet,
// ConvNeXt, ConvNeXt V2, EfficientNet and MobileNetV2 configs, their class defaults where a field is
// left out). The layers themselves are built from these fields by cnn_graph.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vramdoc::estimator {

enum class CnnArch {
  ResNet, RegNet, ConvNext, ConvNextV2, EfficientNet, MobileNetV2, Bit, MobileNetV1, PoolFormer, MobileViT, FocalNet,
  HGNetV2, TextNet, SpatialReductionViT, MobileViTV2, SwiftFormer, Cvt, Hiera
};

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
  // HGNet-V2 (configuration_hgnet_v2.py): the stem's channels and strides, per stage in / mid / out channels, blocks,
  // [downsample] and its stride, light blocks, layers per block (kernel sizes in `kernels`); the learnable affine blocks
  std::vector<std::uint64_t> hg_stem, hg_stem_strides, hg_in, hg_mid, hg_out, hg_blocks, hg_downsample, hg_downsample_strides,
      hg_light, hg_layers;
  bool learnable_affine = false;
  // TextNet (configuration_textnet.py): per stage each layer's (kh, kw) and stride; the stem's stride (its
  // kernel in `kernel_size`, its width in `stem`, its act in `act`); the widths are `widths` (stages + 1)
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> textnet_kernels;
  std::vector<std::vector<std::uint64_t>> textnet_strides;
  std::uint64_t textnet_stem_stride = 2;
  // PVT, PVT v2, SegFormer (configuration_pvt*.py, configuration_segformer.py): per stage heads, spatial-reduction
  // ratios, MLP ratios (depths, widths, patch_sizes, patch_strides above); PVT's position embeddings and cls token
  // (pvt_v1), the Mix-FFN's depthwise conv, PVT v2's linear_attention, SegFormer's attention interface (SDPA's fused
  // kernel when the step runs SDPA: sr_fused, set per estimate) and reshape_last_stage
  std::vector<std::uint64_t> sr_heads, sr_ratios;
  std::vector<double> sr_mlp_ratios;
  bool pvt_v1 = false, mix_ffn = true, linear_attention = false, attention_interface = false, sr_fused = false,
       reshape_last_stage = true;
  // MobileViT V2 (configuration_mobilevitv2.py): base_attn_unit_dims in `widths`, n_attn_blocks in `depths`
  double width_multiplier = 1.0;
  std::uint64_t ffn_multiplier = 2;
  // SwiftFormer (configuration_swiftformer.py): embed_dims in `widths`, downsamples (0 / 1), the downsampling conv's
  // down_patch_size / down_stride / down_pad in patch_sizes / patch_strides / paddings, mlp_ratio, use_layer_scale
  std::vector<std::uint64_t> downsamples;
  // CvT (configuration_cvt.py): per stage the q / kv projections' padding and stride (kernel_qkv in `kernels`), a cls
  // token (0 / 1), qkv_bias (0 / 1), drop_path_rate; embed_dim in `widths`, depth in `depths`, num_heads in
  // `sr_heads`, mlp_ratio in `sr_mlp_ratios`, patch_sizes / patch_stride / patch_padding in patch_sizes /
  // patch_strides / paddings
  std::vector<std::uint64_t> cvt_padding_q, cvt_padding_kv, cvt_stride_q, cvt_stride_kv, cvt_cls_token, cvt_qkv_bias;
  std::vector<double> cvt_drop_path;
  // Hiera (configuration_hiera.py): masked_unit_attention per stage (0 / 1), masked_unit_size and query_stride (their
  // areas), num_query_pool, embed_dim_multiplier; embed_dim in `stem`, num_heads in `sr_heads`, the patch conv in
  // patch_sizes / patch_strides / paddings
  std::vector<std::uint64_t> hiera_mask_unit_attention;
  std::uint64_t hiera_mask_unit_area = 64, hiera_query_stride_area = 4, hiera_query_pool = 3;
  double hiera_dim_multiplier = 2.0;
  // A speech encoder's convolutional feature extractor over the raw samples (wav2vec2, HuBERT, WavLM: conv_dim,
  // conv_kernel, conv_stride, conv_bias, feat_extract_norm); `audio` marks a model that has one.
  bool audio = false;
  std::vector<std::uint64_t> conv_dim, conv_kernel, conv_stride;
  bool conv_bias = false, layer_norm_features = false;  // feat_extract_norm "layer" (else "group": the first layer's GroupNorm)
};

}  // namespace vramdoc::estimator
