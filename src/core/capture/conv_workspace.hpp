// cuDNN's convolution workspace: what PyTorch's cuDNN path (aten/src/ATen/native/cudnn/Conv_v8.cpp,
// benchmark off) asks the caching allocator for inside one convolution, allocated after the op's
// output and freed before it returns. The engine cuDNN's heuristics pick for PyTorch's default NCHW
// tensors on Hopper mostly transforms some of the input X, output Y and weight W to its own layout,
// so the workspace is X + Y + W, or two or one of them, or nothing (depthwise kernels, most 1x1
// ones), plus for weight gradients D partial fp32 gradients (split-K). Which, per shape and
// direction, was measured on a grid of convolutions on the H200 (cuDNN 9.19, PyTorch 2.11:
// cudnn_conv_h200.inc, scripts/gpu/measure_conv_workspace.py); a convolution of the job takes the
// pattern of the nearest grid point of its kind (docs/estimator.md, "cuDNN's convolution workspaces").
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/capture/kernel_call.hpp"

namespace vramdoc::capture {

// One convolution as the workspace model sees it (2-D; 1-D and 3-D are folded into it).
struct ConvCall {
  unsigned element_bytes = 4;
  std::uint64_t n = 0, c_in = 0, c_out = 0;
  std::uint64_t in_hw = 0, out_hw = 0;  // spatial elements of input and output (H x W)
  std::uint64_t kernel = 1;             // kernel elements (R x S)
  std::uint64_t stride = 1, groups = 1;
  bool transposed = false;
  bool forward = false, data_grad = false, weight_grad = false;  // the passes this op runs
};

// The convolution of a `convolution` or `convolution_backward` kernel line (its ARGS as the capture
// writes them: stride, padding, dilation, transposed, output_padding, groups[, output_mask]).
std::optional<ConvCall> conv_call(std::string_view op, const KernelCall& call);

enum class ConvPass { Forward, DataGrad, WeightGrad };

// The workspace one pass of `conv` takes on an sm_90 card with cuDNN 9.
std::uint64_t cudnn_conv_workspace_bytes(const ConvCall& conv, ConvPass pass);

}  // namespace vramdoc::capture
