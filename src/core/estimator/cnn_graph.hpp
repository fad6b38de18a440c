// A convolutional classifier's forward as a list of ops over feature maps (one sample's elements per
// tensor), built from its config (cnn_parts.hpp) the way transformers 5.x's modeling_resnet.py,
// modeling_regnet.py, modeling_convnext.py, modeling_convnextv2.py, modeling_efficientnet.py and
// modeling_mobilenet_v2.py build their modules. forward_cnn.cpp runs it op by op as PyTorch does
// (what autograd saves, what each op allocates and frees); the parameters are the ops' own.
#pragma once
#include <cstdint>
#include <vector>

#include "core/estimator/cnn_parts.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// What an op is, as far as memory goes (what it allocates, what autograd saves for its backward).
enum class CnnOpKind : std::uint8_t {
  Conv,        // Conv2d: saves its input (the autocast copy under amp) and weight; cuDNN workspaces
  Linear,      // nn.Linear on the last dimension: saves its input
  BatchNorm,   // BatchNorm2d: saves its input (training), the batch's mean and inverse std
  LayerNorm,   // F.layer_norm (fp32 under autocast): saves its input; a permuted input is made contiguous first
  Act,         // ACT2FN[hidden_act]: ReLU saves its output, the others (ReLU6, GELU, SiLU) their input
  Sigmoid,     // saves its output
  AddInPlace,  // hidden += residual: no new tensor
  Add,         // a + b: a new tensor, nothing saved
  Mul,         // a * b (squeeze-excite's scale, GRN's x * norm): saves both
  ScaleParam,  // x * a parameter of C elements (layer scale, GRN's weight): saves x
  BiasParam,   // x + a parameter of C elements (GRN's bias): nothing saved
  MaxPool,     // MaxPool2d: saves its input and int64 indices of its output
  AvgPool,     // adaptive / global average pooling, mean over H x W: nothing saved
  Cat,         // torch.cat((a, b, [rest]), dim=1): a new tensor, nothing saved; its backward hands out views of the gradient
  Attention,   // eager q @ k^T / sqrt(d), softmax (saved), @ v, permute().contiguous(): saves q, k, v (MobileViT, PVT,
               // CvT); fused (SDPA's flash kernel, SegFormer): saves q, k, v, the output and an fp32 logsumexp
  Pool,        // AvgPool2d(k, stride 1, k // 2) keeping the size (PoolFormer's token mixer): saves its input
  Pad,         // F.pad / ZeroPad2d: a copy (even with nothing to pad), nothing saved
  Dropout,     // training with p > 0: a bool mask saved, a new output (in place: none)
  VectorNorm,  // GRN's torch.linalg.vector_norm over H x W (fp32 under autocast): saves input and output
  MaxReduce,   // tensor.max(dim=k).values over a strided view (Hiera's query pooling): saves the int64 indices
};

enum class CnnAct : std::uint8_t { Relu, SavesInput };

struct CnnConv {  // a convolution's geometry, for cuDNN's workspace (capture/conv_workspace.hpp)
  std::uint64_t c_in = 0, c_out = 0, in_hw = 0, out_hw = 0, kernel = 1, stride = 1, groups = 1;
};

struct CnnOp {
  CnnOpKind kind = CnnOpKind::Add;
  int in0 = -1, in1 = -1, out = -1;        // tensor indices (-1: none)
  int in2 = -1;                            // Attention: the values
  std::vector<int> rest;                   // Cat: the inputs after in0 and in1
  std::vector<int> keeps;                  // tensors Python still references until this op returns (modules' inputs)
  std::vector<std::uint64_t> params;       // its parameter tensors' elements (weight, bias), in model.parameters() order
  std::uint64_t buffers = 0;               // BatchNorm: running mean and variance (elements; plus an int64 counter)
  CnnAct act = CnnAct::SavesInput;
  CnnConv conv;
  bool permuted_input = false;             // LayerNorm on a permuted view (ConvNeXt)
  bool in_place = false;                   // Dropout(inplace=True)
  bool standardized = false;               // Conv: BiT's WeightStandardizedConv2d (F.batch_norm over the weight first)
  bool fused = false;                      // Attention: SDPA's fused kernel rather than the eager matmuls
  std::uint64_t heads = 1, queries = 0;    // Attention: heads and query rows per sample (the fused kernel's logsumexp)
  std::uint64_t channels = 0;              // BatchNorm / LayerNorm: the statistics' count per sample; Attention: scores
};

struct CnnGraph {
  std::vector<std::uint64_t> tensors;  // elements per sample of each tensor; 0 is the pixels
  std::vector<CnnOp> ops;
  int logits = -1;
  std::uint64_t params = 0;            // every parameter's elements
  std::uint64_t layers = 0;            // residual blocks (for the layer count in messages)
};

// The most elements one feature map of one sample may have (an absurd image size is an error, not an overflow).
inline constexpr std::uint64_t kMaxFeatureElements = 1ULL << 36;

// Builds a speech encoder's feature extractor (parts.audio) over `samples` raw samples: its 1-D convolutions,
// the first layer's GroupNorm (or a LayerNorm after each), GELU; the last feature map is `logits`.
Result<CnnGraph> build_audio_features(const CnnParts& parts, std::uint64_t samples, bool training);

// Builds the classifier's forward for images of `image_size` pixels per side; errors for sizes that
// would overflow or leave no pixel (an image smaller than the network's downsampling).
Result<CnnGraph> build_cnn_graph(const CnnParts& parts, std::uint64_t image_size, bool training);

}  // namespace vramdoc::estimator
