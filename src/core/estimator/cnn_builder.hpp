// The builder of cnn_graph.hpp's op lists, shared by the files that build one family each (cnn_graph.cpp:
// ResNet, RegNet, ConvNeXt, EfficientNet, MobileNetV2; cnn_graph_more.cpp: BiT, MobileNetV1, PoolFormer, MobileViT;
// cnn_graph_focal.cpp: FocalNet; cnn_graph_hgnet.cpp: HGNet-V2, TextNet; cnn_graph_sra.cpp: PVT, PVT v2, SegFormer;
// cnn_graph_mobilevit2.cpp; cnn_graph_swiftformer.cpp; cnn_graph_cvt.cpp, cnn_graph_hiera.cpp).
// Shapes follow PyTorch's floor((in + padding - dilation x (k - 1) - 1) / stride) + 1.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/estimator/cnn_graph.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::cnn_build {

using u64 = std::uint64_t;

inline CnnOp node(CnnOpKind kind, int in0, int in1, int out) {
  CnnOp op;
  op.kind = kind, op.in0 = in0, op.in1 = in1, op.out = out;
  return op;
}

struct Fm {  // a feature map: its tensor and shape (channels, height, width) per sample
  int t = -1;
  u64 c = 0, h = 0, w = 0;
};

inline CnnAct act_of(const std::string& name) { return name == "relu" ? CnnAct::Relu : CnnAct::SavesInput; }

class Builder {
 public:
  Builder(bool training) : training_(training) {}
  CnnGraph g;
  std::string error;

  Fm input(u64 c, u64 side) { return {tensor(c, side, side), c, side, side}; }

  // Conv2d(c_out, k, stride, padding p on each side, groups, bias, dilation).
  Fm conv(const Fm& x, u64 c_out, u64 k, u64 stride, u64 p, u64 groups = 1, bool bias = false, u64 dilation = 1) {
    return conv_rect(x, c_out, k, k, stride, p, p, groups, bias, dilation);
  }
  // Conv2d with a kh x kw kernel and padding (ph, pw) (TextNet's 1x3 / 3x1 branches, PVT's patch embeddings).
  Fm conv_rect(const Fm& x, u64 c_out, u64 kh, u64 kw, u64 stride, u64 ph, u64 pw, u64 groups = 1, bool bias = false,
               u64 dilation = 1) {
    const auto side = [&](u64 in, u64 k, u64 p) {
      const u64 span = dilation * (k - 1) + 1;
      return in + 2 * p >= span ? (in + 2 * p - span) / stride + 1 : 0;
    };
    Fm y{-1, c_out, side(x.h, kh, ph), side(x.w, kw, pw)};
    if (groups == 0 || x.c % groups != 0 || c_out % groups != 0) fail("a convolution's groups do not divide its channels");
    y.t = tensor(y.c, y.h, y.w);
    CnnOp op = node(CnnOpKind::Conv, x.t, -1, y.t);
    op.params = {saturating_mul(saturating_mul(c_out, x.c / std::max<u64>(groups, 1)), kh * kw)};
    if (bias) op.params.push_back(c_out);
    op.conv = {x.c, c_out, x.h * x.w, y.h * y.w, kh * kw, stride, groups};
    push(std::move(op));
    return y;
  }
  // Conv1d over the width (a 1 x k kernel on a feature map one row high).
  Fm conv1d(const Fm& x, u64 c_out, u64 k, u64 stride, bool bias) {
    Fm y{-1, c_out, 1, x.w >= k ? (x.w - k) / stride + 1 : 0};
    y.t = tensor(y.c, 1, y.w);
    CnnOp op = node(CnnOpKind::Conv, x.t, -1, y.t);
    op.params = {saturating_mul(saturating_mul(c_out, x.c), k)};
    if (bias) op.params.push_back(c_out);
    op.conv = {x.c, c_out, x.w, y.w, k, stride, 1};
    push(std::move(op));
    return y;
  }
  // GroupNorm with one group per channel (wav2vec2's first layer): statistics per channel.
  Fm groupnorm(const Fm& x) {
    Fm y = layernorm(x, false);
    g.ops.back().channels = x.c;
    return y;
  }
  Fm bn(const Fm& x) {
    Fm y = like(x);
    CnnOp op = node(CnnOpKind::BatchNorm, x.t, -1, y.t);
    op.params = {x.c, x.c}, op.buffers = 2 * x.c, op.channels = x.c;
    push(std::move(op));
    return y;
  }
  Fm layernorm(const Fm& x, bool permuted) {  // over the channels (ConvNeXt: channels last, or channels first by permuting)
    Fm y = like(x);
    CnnOp op = node(CnnOpKind::LayerNorm, x.t, -1, y.t);
    op.params = {x.c, x.c}, op.permuted_input = permuted, op.channels = x.h * x.w;
    push(std::move(op));
    return y;
  }
  Fm act(const Fm& x, CnnAct a) {
    Fm y = like(x);
    CnnOp op = node(CnnOpKind::Act, x.t, -1, y.t);
    op.act = a;
    push(std::move(op));
    return y;
  }
  Fm sigmoid(const Fm& x) { return unary(CnnOpKind::Sigmoid, x); }
  Fm pool_same(const Fm& x) { return unary(CnnOpKind::Pool, x); }
  Fm cat(const Fm& a, const Fm& b) {  // along the channels
    Fm y{-1, a.c + b.c, a.h, a.w};
    y.t = tensor(y.c, y.h, y.w);
    push(node(CnnOpKind::Cat, a.t, b.t, y.t));
    return y;
  }
  // torch.cat(list, dim=1) of two or more feature maps of one size (HGNetV2BasicLayer's aggregation).
  Fm cat_all(const std::vector<Fm>& parts) {
    if (parts.size() < 2) return parts.empty() ? Fm{} : parts.front();
    Fm y{-1, 0, parts[0].h, parts[0].w};
    for (const Fm& f : parts) y.c = saturating_add(y.c, f.c);
    y.t = tensor(y.c, y.h, y.w);
    CnnOp op = node(CnnOpKind::Cat, parts[0].t, parts[1].t, y.t);
    for (std::size_t i = 2; i < parts.size(); ++i) op.rest.push_back(parts[i].t);
    push(std::move(op));
    return y;
  }
  // Eager attention over tokens laid out as (channels = width, h = tokens, w = independent sequences per sample).
  // Keys and values may be fewer tokens than the queries (PVT's spatial reduction); `fused`: SDPA's kernel (no scores
  // kept, a logsumexp per query and head).
  Fm attention(const Fm& q, const Fm& k, const Fm& v, u64 heads, bool fused = false) {
    Fm y = like(q);
    CnnOp op = node(CnnOpKind::Attention, q.t, k.t, y.t);
    op.in2 = v.t, op.channels = saturating_mul(saturating_mul(heads, q.w), saturating_mul(q.h, k.h));
    op.fused = fused, op.heads = heads, op.queries = saturating_mul(q.h, q.w);
    push(std::move(op));
    return y;
  }
  Fm add_in_place(const Fm& a, const Fm& b) { return binary(CnnOpKind::AddInPlace, a, b); }
  Fm add(const Fm& a, const Fm& b) { return binary(CnnOpKind::Add, a, b); }
  Fm mul(const Fm& a, const Fm& b) { return binary(CnnOpKind::Mul, a, b); }
  // x * / + a parameter of `elements` (0: one per channel; HGNetV2's learnable affine block: one scalar each).
  Fm scale(const Fm& x, u64 elements = 0) { return with_param(CnnOpKind::ScaleParam, x, elements); }
  Fm bias(const Fm& x, u64 elements = 0) { return with_param(CnnOpKind::BiasParam, x, elements); }
  Fm maxpool(const Fm& x, u64 k, u64 stride, u64 p) {
    const auto side = [&](u64 in) { return in + 2 * p >= k ? (in + 2 * p - k) / stride + 1 : 0; };
    Fm y{-1, x.c, side(x.h), side(x.w)};
    y.t = tensor(y.c, y.h, y.w);
    push(node(CnnOpKind::MaxPool, x.t, -1, y.t));
    return y;
  }
  Fm avgpool(const Fm& x, u64 h = 1, u64 w = 1) {  // adaptive average pooling to h x w (default one value per channel)
    Fm y{-1, x.c, h, w};
    y.t = tensor(y.c, h, w);
    push(node(CnnOpKind::AvgPool, x.t, -1, y.t));
    return y;
  }
  Fm vector_norm(const Fm& x) {
    Fm y{-1, x.c, 1, 1};
    y.t = tensor(y.c, 1, 1);
    push(node(CnnOpKind::VectorNorm, x.t, -1, y.t));
    return y;
  }
  Fm max_reduce(const Fm& x, u64 factor) {  // x.view(..., factor, -1, C).max(dim): 1 / factor of the positions
    Fm y{-1, x.c, std::max<u64>(x.h / std::max<u64>(factor, 1), 1), x.w};
    y.t = tensor(y.c, y.h, y.w);
    push(node(CnnOpKind::MaxReduce, x.t, -1, y.t));
    return y;
  }
  Fm norm_over_channels(const Fm& x) {  // x.norm(p=2, dim=channels, keepdim=True): one value per position
    Fm y{-1, 1, x.h, x.w};
    y.t = tensor(1, x.h, x.w);
    push(node(CnnOpKind::VectorNorm, x.t, -1, y.t));
    return y;
  }
  Fm pad(const Fm& x, u64 height, u64 width) {  // total rows and columns added
    Fm y{-1, x.c, x.h + height, x.w + width};
    y.t = tensor(y.c, y.h, y.w);
    push(node(CnnOpKind::Pad, x.t, -1, y.t));
    return y;
  }
  Fm dropout(const Fm& x, double p, bool in_place) {
    if (!training_ || !(p > 0.0)) return x;  // F.dropout with p = 0 or in eval returns its input
    Fm y = in_place ? x : like(x);
    CnnOp op = node(CnnOpKind::Dropout, x.t, -1, y.t);
    op.in_place = in_place;
    push(std::move(op));
    return y;
  }
  // nn.Linear over the channels of each position (ConvNeXt's pointwise layers; the classifier on (c, 1, 1)).
  Fm linear(const Fm& x, u64 out, bool bias = true) {
    Fm y{-1, out, x.h, x.w};
    y.t = tensor(out, x.h, x.w);
    CnnOp op = node(CnnOpKind::Linear, x.t, -1, y.t);
    op.params = {saturating_mul(x.c, out)};
    if (bias) op.params.push_back(out);
    push(std::move(op));
    return y;
  }
  // Python keeps `t` (a module's input, a block's `residual` / `embeddings`) referenced until the last op so far returns.
  void hold_until_now(int t) {
    if (!g.ops.empty()) g.ops.back().keeps.push_back(t);
  }
  bool training() const { return training_; }
  void fail(const std::string& why) {
    if (error.empty()) error = why;
  }

 private:
  bool training_;
  int tensor(u64 c, u64 h, u64 w) {
    const u64 e = saturating_mul(saturating_mul(c, h), w);
    if (e == 0) fail("the image is smaller than the network's downsampling (a feature map of no pixels)");
    if (e > kMaxFeatureElements) fail("a feature map of " + std::to_string(e) + " elements per image: absurdly large");
    g.tensors.push_back(e);
    return static_cast<int>(g.tensors.size() - 1);
  }
  Fm like(const Fm& x) { return {tensor(x.c, x.h, x.w), x.c, x.h, x.w}; }
  void push(CnnOp op) {
    for (u64 p : op.params) g.params = saturating_add(g.params, p);
    g.ops.push_back(std::move(op));
  }
  Fm unary(CnnOpKind kind, const Fm& x) {
    Fm y = like(x);
    push(node(kind, x.t, -1, y.t));
    return y;
  }
  Fm binary(CnnOpKind kind, const Fm& a, const Fm& b) {
    Fm y = like(a);
    push(node(kind, a.t, b.t, y.t));
    return y;
  }
  Fm with_param(CnnOpKind kind, const Fm& x, u64 elements) {
    Fm y = like(x);
    CnnOp op = node(kind, x.t, -1, y.t);
    op.params = {elements > 0 ? elements : x.c};
    push(std::move(op));
    return y;
  }
};

// A ConvLayer module (conv, BatchNorm, [act]): its input referenced until it returns.
inline Fm conv_bn_act(Builder& b, const Fm& x, u64 c_out, u64 k, u64 stride, u64 groups, bool act, CnnAct a) {
  Fm y = b.bn(b.conv(x, c_out, k, stride, k / 2, groups));
  if (act) y = b.act(y, a);
  b.hold_until_now(x.t);
  return y;
}

inline void classifier(Builder& b, Fm pooled, u64 labels) {
  b.g.logits = labels > 0 ? b.linear(pooled, labels).t : pooled.t;  // num_labels 0: nn.Identity
}

// modeling_mobilenet_v2.py make_divisible (modeling_mobilenet_v1.py's copy is the same).
inline u64 make_divisible(double value, u64 divisor, u64 min_value) {
  const double d = static_cast<double>(divisor);
  double v = std::max(static_cast<double>(min_value), std::floor(std::floor(value + d / 2) / d) * d);
  if (v < 0.9 * value) v += d;
  return static_cast<u64>(v);
}

// cnn_graph_more.cpp: the families built there.
void bit(Builder& b, const CnnParts& p, Fm x);
void mobilenet_v1(Builder& b, const CnnParts& p, Fm x);
void poolformer(Builder& b, const CnnParts& p, Fm x);
void mobilevit(Builder& b, const CnnParts& p, Fm x);
void focalnet(Builder& b, const CnnParts& p, Fm x);
// cnn_graph_hgnet.cpp, cnn_graph_sra.cpp, cnn_graph_mobilevit2.cpp, cnn_graph_swiftformer.cpp, cnn_graph_cvt.cpp,
// cnn_graph_hiera.cpp.
void hgnet_v2(Builder& b, const CnnParts& p, Fm x);
void textnet(Builder& b, const CnnParts& p, Fm x);
void spatial_reduction_vit(Builder& b, const CnnParts& p, Fm x);
void mobilevit_v2(Builder& b, const CnnParts& p, Fm x);
void swiftformer(Builder& b, const CnnParts& p, Fm x);
void cvt(Builder& b, const CnnParts& p, Fm x);
void hiera(Builder& b, const CnnParts& p, Fm x);

}  // namespace vramdoc::estimator::cnn_build
