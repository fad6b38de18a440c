// HGNet-V2's and TextNet's modules op by op, as transformers 5.x builds them (modeling_hgnet_v2.py,
// modeling_textnet.py), on cnn_builder.hpp's ops.
#include <algorithm>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

// HGNetV2ConvLayer: Conv2d(k, stride, padding (k - 1) // 2, groups, bias=False), BatchNorm2d, [act], [lab]: the
// learnable affine block `scale * x + bias` (two one-element parameters: the product saves x, the sum a new tensor)
// where there is an activation and use_learnable_affine_block. Its input referenced until it returns.
Fm hg_conv(Builder& b, const CnnParts& p, const Fm& x, u64 c_out, u64 k, u64 stride, u64 groups, bool act) {
  Fm y = b.bn(b.conv(x, c_out, k, stride, (k - 1) / 2, groups));
  if (act) {
    y = b.act(y, act_of(p.act));
    if (p.learnable_affine) y = b.bias(b.scale(y, 1), 1);
  }
  b.hold_until_now(x.t);
  return y;
}

}  // namespace

// modeling_hgnet_v2.py. HGNetV2Embeddings: stem1 (3x3, stem_strides[0]) -> F.pad(0, 1, 0, 1) (a copy) -> stem2a
// (2x2 to half the width) -> F.pad -> stem2b (2x2 back); MaxPool2d(2, 1, ceil_mode) of the padded stem1; cat(pool,
// stem2b); stem3 (3x3, stem_strides[3]); stem4 (1x1 to stem_channels[2]). HGNetV2Stage: [downsample: a depthwise
// 3x3 conv + BN of stage_downsample_strides, no act], stage_num_blocks HGNetV2BasicLayers: stage_numb_of_layers
// conv layers of stage_mid_channels (a light block: 1x1 conv + BN without act, then a depthwise kxk + BN + act;
// else kxk + BN + act), every layer's output kept in a list with the block's input until the block returns,
// torch.cat of them all, the aggregation's squeeze 1x1 (to out // 2) and excitation 1x1 (to out) conv layers,
// + identity for every block but the first. AdaptiveAvgPool2d, Flatten, fc.
void hgnet_v2(Builder& b, const CnnParts& p, Fm x) {
  const u64 stem = p.hg_stem[1];
  Fm e = hg_conv(b, p, x, stem, 3, p.hg_stem_strides[0], 1, true);
  e = b.pad(e, 1, 1);
  Fm a = b.pad(hg_conv(b, p, e, stem / 2, 2, p.hg_stem_strides[1], 1, true), 1, 1);
  a = hg_conv(b, p, a, stem, 2, p.hg_stem_strides[2], 1, true);
  const Fm pooled = b.maxpool(e, 2, 1, 0);
  x = b.cat(pooled, a);
  x = hg_conv(b, p, x, stem, 3, p.hg_stem_strides[3], 1, true);
  x = hg_conv(b, p, x, p.hg_stem[2], 1, p.hg_stem_strides[4], 1, true);
  for (std::size_t s = 0; s < p.hg_in.size(); ++s) {
    if (p.hg_downsample[s]) x = hg_conv(b, p, x, p.hg_in[s], 3, p.hg_downsample_strides[s], p.hg_in[s], false);
    for (u64 blk = 0; blk < p.hg_blocks[s]; ++blk) {
      const Fm identity = x;
      std::vector<Fm> outputs = {x};
      Fm h = x;
      for (u64 l = 0; l < p.hg_layers[s]; ++l) {
        if (p.hg_light[s]) {
          h = hg_conv(b, p, h, p.hg_mid[s], 1, 1, 1, false);
          h = hg_conv(b, p, h, p.hg_mid[s], p.kernels[s], 1, p.hg_mid[s], true);
        } else {
          h = hg_conv(b, p, h, p.hg_mid[s], p.kernels[s], 1, 1, true);
        }
        outputs.push_back(h);
      }
      h = b.cat_all(outputs);
      h = hg_conv(b, p, h, p.hg_out[s] / 2, 1, 1, 1, true);
      h = hg_conv(b, p, h, p.hg_out[s], 1, 1, 1, true);
      if (blk > 0) h = b.add(h, identity);
      for (const Fm& o : outputs) b.hold_until_now(o.t);  // `output` (the list) and `identity` until the block returns
      x = h;
      ++b.g.layers;
    }
  }
  classifier(b, b.avgpool(x), p.labels);
}

// modeling_textnet.py. TextNetConvLayer (the stem): Conv2d(stem_kernel_size, stem_stride, padding k // 2, no bias),
// BatchNorm2d, stem_act_func. TextNetStage: one TextNetRepConvLayer per entry of conv_layer_kernel_sizes[stage]
// (hidden_sizes[stage] -> hidden_sizes[stage + 1], then that width), each = main_conv (kh x kw, padding
// ((kh - 1) // 2, (kw - 1) // 2)) + BN; [vertical_conv (kh x 1) + BN where kw != 1]; [horizontal_conv (1 x kw) + BN
// where kh != 1]; [rbr_identity: a BatchNorm of the input where in == out and stride 1]; each branch summed into a new
// tensor; ReLU. TextNetModel's pooler AdaptiveAvgPool2d((2, 2)) (a few values per sample: left out), the
// classifier's AdaptiveAvgPool2d(1), Flatten, fc.
void textnet(Builder& b, const CnnParts& p, Fm x) {
  const u64 k = p.kernel_size;
  x = b.bn(b.conv(x, p.stem, k, p.textnet_stem_stride, k / 2));
  if (!p.act.empty()) x = b.act(x, act_of(p.act));
  for (std::size_t s = 0; s < p.textnet_kernels.size(); ++s) {
    for (std::size_t l = 0; l < p.textnet_kernels[s].size(); ++l) {
      const u64 kh = p.textnet_kernels[s][l].first, kw = p.textnet_kernels[s][l].second, stride = p.textnet_strides[s][l];
      const u64 out = p.widths[s + 1];
      const Fm in = x;
      Fm sum = b.bn(b.conv_rect(in, out, kh, kw, stride, (kh - 1) / 2, (kw - 1) / 2));
      if (kw != 1) sum = b.add(sum, b.bn(b.conv_rect(in, out, kh, 1, stride, (kh - 1) / 2, 0)));
      if (kh != 1) sum = b.add(sum, b.bn(b.conv_rect(in, out, 1, kw, stride, 0, (kw - 1) / 2)));
      if (in.c == out && stride == 1) sum = b.add(sum, b.bn(in));
      x = b.act(sum, CnnAct::Relu);
      b.hold_until_now(in.t);
      ++b.g.layers;
    }
  }
  classifier(b, b.avgpool(x), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
