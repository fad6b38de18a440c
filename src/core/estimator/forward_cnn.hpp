// The class that runs a convolutional classifier's step tensor by tensor (cnn_step.hpp's cnn_events): its
// weights, the forward op by op and inference (forward_cnn.cpp), the loss, the backward in reverse op order
// and the optimizer (forward_cnn_backward.cpp). Internal to those two files.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/capture/conv_workspace.hpp"
#include "core/estimator/cnn_step.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

class CnnStep {
 public:
  using u64 = std::uint64_t;
  static constexpr u64 kCublasWorkspace = 32 * MiB;  // one per (thread, stream): CublasHandlePool.cpp, 32 MiB on Hopper

  CnnStep(Sequence& s, const CnnGraph& g, const CnnRun& r);
  void weights();
  void train_step(bool first);
  void infer();

 private:
  Sequence& s_;
  const CnnGraph& g_;
  const CnnRun& r_;
  std::vector<u64> elements_, dtype_, id_, grad_;
  std::vector<int> uses_, saves_;
  std::vector<bool> needs_grad_;
  std::vector<std::vector<u64>> extras_;  // per op: tensors of its own that autograd keeps (casts, masks, indices, statistics)
  std::vector<std::vector<int>> saved_;   // per op: the graph's tensors autograd keeps for it
  std::vector<u64> weights_, states_, grads_, region_casts_;
  std::unordered_map<u64, int> grad_refs_;
  bool forward_workspace_ = false, backward_workspace_ = false;

  u64 bytes(int t, u64 dtype) const { return saturating_mul(elements_[t], dtype); }
  u64 bytes(int t) const { return bytes(t, dtype_[t]); }
  u64 wider(u64 a, u64 b) const { return std::max(a, b); }
  void transient(u64 b, Use use = Use::Workspace) { s_.free(s_.alloc(b, use)); }

  // the forward (forward_cnn.cpp)
  void begin_step();
  void release(int t);
  void consume(int t);
  void save(std::size_t op, int t, bool training);
  void unsave(int t);
  u64 make(int t, u64 dtype);
  u64 conv_workspace(const CnnOp& op, capture::ConvPass pass) const;
  void matmul_forward(std::size_t i, bool training);
  void forward(std::size_t i, bool training);

  // the loss, the backward and the optimizer (forward_cnn_backward.cpp)
  void loss();
  void hold(u64 gid) { ++grad_refs_[gid]; }
  void drop(u64 gid);
  void deliver(int t, u64 gid);
  void fresh(int t, u64 b);
  void pass(int t, u64 gout);
  void param_grads(const CnnOp& op, bool via_cast);
  void unsave_all(std::size_t i);
  void backward(std::size_t i);
  void optimizer(bool first);
};

}  // namespace vramdoc::estimator::detail
