// A convolutional classifier's step as PyTorch runs it, tensor by tensor (forward_cnn.cpp,
// forward_cnn_backward.cpp): the internal interface between the op-by-op simulation and the estimate
// (estimate_cnn.cpp).
#pragma once
#include <cstdint>

#include "core/estimator/cnn_graph.hpp"
#include "core/estimator/estimate.hpp"
#include "core/estimator/sequence.hpp"

namespace vramdoc::estimator::detail {

struct CnnRun {
  std::uint64_t batch = 1;
  bool trains = true;
  bool amp = false;                 // autocast: convolutions and Linears in 16 bit, LayerNorm in fp32
  std::uint64_t compute_bytes = 4;  // the convolutions' dtype
  std::uint64_t param_bytes = 4;    // the parameters' (and buffers') dtype
  Optimizer optimizer = Optimizer::AdamW;
  int steps = 3;                    // training steps recorded (the optimizer's state arrives in the first)
};

// Records the weights, then `run.steps` training steps or one inference forward, into `s`.
void cnn_events(Sequence& s, const CnnGraph& graph, const CnnRun& run);

}  // namespace vramdoc::estimator::detail
