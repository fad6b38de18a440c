// A convolutional classifier's step tensor by tensor, as PyTorch 2.x runs it (forward_cnn.hpp's CnnStep): the
// weights, the forward op by op (each op's output; under autocast the 16-bit copies of a convolution's input and
// weights, LayerNorm's fp32 copy; cuDNN's workspace inside each convolution, capture/conv_workspace.hpp), what
// autograd saves (cnn_graph.hpp: a convolution its input, BatchNorm its input, ReLU its output, ...) held until
// that op's backward (forward_cnn_backward.cpp: the loss, the backward, the optimizer). Inference frees each
// tensor once its last consumer ran.
#include "core/estimator/forward_cnn.hpp"

namespace vramdoc::estimator::detail {

CnnStep::CnnStep(Sequence& s, const CnnGraph& g, const CnnRun& r) : s_(s), g_(g), r_(r) {
  const std::size_t n = g.tensors.size();
  elements_.resize(n), dtype_.assign(n, 0), id_.assign(n, 0), uses_.assign(n, 0), saves_.assign(n, 0);
  grad_.assign(n, 0), needs_grad_.assign(n, false), extras_.resize(g.ops.size()), saved_.resize(g.ops.size());
  for (std::size_t t = 0; t < n; ++t) elements_[t] = saturating_mul(g.tensors[t], r.batch);
  for (const CnnOp& op : g.ops) {
    needs_grad_[op.out] = !op.params.empty() || (op.in0 >= 0 && needs_grad_[op.in0]) || (op.in1 >= 0 && needs_grad_[op.in1]) ||
                          (op.in2 >= 0 && needs_grad_[op.in2]);
    for (int t : op.rest) needs_grad_[op.out] = needs_grad_[op.out] || needs_grad_[t];
  }
}

void CnnStep::weights() {
  for (const CnnOp& op : g_.ops) {
    for (u64 p : op.params) weights_.push_back(s_.alloc(saturating_mul(p, r_.param_bytes), Use::Weight));
    if (op.buffers > 0) {  // running_mean, running_var, num_batches_tracked
      s_.alloc(saturating_mul(op.buffers / 2, r_.param_bytes), Use::Weight);
      s_.alloc(saturating_mul(op.buffers / 2, r_.param_bytes), Use::Weight);
      s_.alloc(8, Use::Weight);
    }
  }
}

void CnnStep::train_step(bool first) {
  s_.stage(Stage::Forward);
  begin_step();
  for (std::size_t i = 0; i < g_.ops.size(); ++i) forward(i, true);
  s_.stage(Stage::Loss);
  loss();
  s_.stage(Stage::Backward);
  for (std::size_t i = g_.ops.size(); i-- > 0;) backward(i);
  s_.free(id_[0]), id_[0] = 0;
  s_.stage(Stage::Optimizer);
  optimizer(first);
}

void CnnStep::infer() {
  s_.stage(Stage::Layers);
  begin_step();
  for (std::size_t i = 0; i < g_.ops.size(); ++i) {
    if (static_cast<int>(g_.ops[i].out) == g_.logits) s_.stage(Stage::Head);
    forward(i, false);
  }
  s_.free(id_[g_.logits]), id_[g_.logits] = 0;
  s_.free(id_[0]), id_[0] = 0;
  s_.free(region_casts_);  // `with torch.autocast(...)` around each forward
}

void CnnStep::begin_step() {
  for (const CnnOp& op : g_.ops) {
    if (op.in0 >= 0) ++uses_[op.in0];
    if (op.in1 >= 0) ++uses_[op.in1];
    if (op.in2 >= 0) ++uses_[op.in2];
    for (int t : op.rest) ++uses_[t];
    for (int t : op.keeps) ++uses_[t];
  }
  ++uses_[g_.logits];  // the loss (training) or the caller (inference) reads the logits
  dtype_[0] = r_.amp ? 4 : r_.compute_bytes;  // pixel_values: fp32 under autocast, else the model's dtype
  id_[0] = s_.alloc(bytes(0));
}

void CnnStep::release(int t) {
  if (t <= 0 || uses_[t] > 0 || saves_[t] > 0 || id_[t] == 0) return;  // the pixels are the caller's
  s_.free(id_[t]);
  id_[t] = 0;
}

void CnnStep::consume(int t) {
  if (t < 0) return;
  --uses_[t];
  release(t);
}

void CnnStep::save(std::size_t op, int t, bool training) {
  if (!training) return;
  ++saves_[t];
  saved_[op].push_back(t);
}

void CnnStep::unsave(int t) {
  --saves_[t];
  release(t);
}

std::uint64_t CnnStep::make(int t, u64 dtype) {
  dtype_[t] = dtype;
  id_[t] = s_.alloc(bytes(t));
  return id_[t];
}

std::uint64_t CnnStep::conv_workspace(const CnnOp& op, capture::ConvPass pass) const {
  capture::ConvCall c;
  c.element_bytes = static_cast<unsigned>(r_.compute_bytes);
  c.n = r_.batch, c.c_in = op.conv.c_in, c.c_out = op.conv.c_out, c.in_hw = op.conv.in_hw, c.out_hw = op.conv.out_hw;
  c.kernel = op.conv.kernel, c.stride = op.conv.stride, c.groups = op.conv.groups;
  c.forward = pass == capture::ConvPass::Forward, c.data_grad = pass == capture::ConvPass::DataGrad;
  c.weight_grad = pass == capture::ConvPass::WeightGrad;
  return capture::cudnn_conv_workspace_bytes(c, pass);
}

// A convolution or Linear: its input in the compute dtype (autocast's copy), the weights' 16-bit copies
// (autocast; in no_grad made per call), the output, cuDNN's workspace.
void CnnStep::matmul_forward(std::size_t i, bool training) {
  const CnnOp& op = g_.ops[i];
  const int x = op.in0;
  u64 cast = 0;
  if (dtype_[x] != r_.compute_bytes) cast = s_.alloc(bytes(x, r_.compute_bytes));
  // BiT's WeightStandardizedConv2d (modeling_bit.py): F.batch_norm(weight.reshape(1, out, -1), training=True) makes
  // a weight-sized tensor in the parameters' dtype (batch_norm is on no autocast list) and its fp32 mean and
  // inverse std per output channel; the convolution saves it (under autocast its 16-bit copy, made per call: not
  // a leaf, so not cached)
  u64 standardized = 0;
  std::vector<u64> statistics;
  if (op.standardized && !op.params.empty()) {
    standardized = s_.alloc(saturating_mul(op.params[0], r_.param_bytes), Use::Cast);
    statistics = {s_.alloc(saturating_mul(op.conv.c_out, 4)), s_.alloc(saturating_mul(op.conv.c_out, 4))};
  }
  std::vector<u64> weight_casts;
  if (r_.amp) {
    for (u64 p : op.params) weight_casts.push_back(s_.alloc(saturating_mul(p, 2), Use::Cast));
    s_.free(standardized), standardized = 0;
  }
  make(op.out, r_.compute_bytes);
  if (op.kind == CnnOpKind::Conv) transient(conv_workspace(op, capture::ConvPass::Forward));
  if (op.kind == CnnOpKind::Linear && !forward_workspace_) s_.alloc(kCublasWorkspace, Use::Workspace), forward_workspace_ = true;
  if (training) {
    if (cast != 0) extras_[i].push_back(cast);
    else save(i, x, true);
    extras_[i].insert(extras_[i].end(), weight_casts.begin(), weight_casts.end());
    if (standardized != 0) extras_[i].push_back(standardized);
    extras_[i].insert(extras_[i].end(), statistics.begin(), statistics.end());
  } else {  // autocast caches the casts of leaf parameters (requires_grad, even under no_grad) until its region exits
    s_.free(cast);
    s_.free(standardized), s_.free(statistics);
    if (op.standardized) s_.free(weight_casts);
    else region_casts_.insert(region_casts_.end(), weight_casts.begin(), weight_casts.end());
  }
  consume(x);
  for (int t : op.keeps) consume(t);
}

void CnnStep::forward(std::size_t i, bool training) {
  const CnnOp& op = g_.ops[i];
  const int x = op.in0, y = op.in1;
  switch (op.kind) {
    case CnnOpKind::Conv:
    case CnnOpKind::Linear: matmul_forward(i, training); return;
    case CnnOpKind::BatchNorm:
      make(op.out, dtype_[x]);
      if (training) {  // cudnn_batch_norm: save_mean and save_var (fp32 per channel)
        save(i, x, true);
        extras_[i].push_back(s_.alloc(op.channels * 4));
        extras_[i].push_back(s_.alloc(op.channels * 4));
      }
      break;
    case CnnOpKind::LayerNorm: {  // autocast runs layer_norm in fp32
      const u64 dtype = r_.amp ? 4 : dtype_[x];
      const u64 cast = dtype != dtype_[x] ? s_.alloc(bytes(x, dtype)) : 0;
      const u64 contiguous = op.permuted_input ? s_.alloc(bytes(x, dtype)) : 0;  // native_layer_norm: X.expect_contiguous()
      make(op.out, dtype);
      s_.free(contiguous);
      if (training) {
        if (cast != 0) extras_[i].push_back(cast);
        else save(i, x, true);
        extras_[i].push_back(s_.alloc(saturating_mul(saturating_mul(op.channels, r_.batch), 4)));  // mean
        extras_[i].push_back(s_.alloc(saturating_mul(saturating_mul(op.channels, r_.batch), 4)));  // rstd
      } else {
        s_.free(cast);
      }
      break;
    }
    case CnnOpKind::Act:
      make(op.out, dtype_[x]);
      if (training) save(i, op.act == CnnAct::Relu ? op.out : x, true);
      break;
    case CnnOpKind::Sigmoid:
      make(op.out, dtype_[x]);
      if (training) save(i, op.out, true);
      break;
    case CnnOpKind::AddInPlace:
      if (saves_[x] == 0 && uses_[x] == 1) {  // hidden += residual: the output is the first operand's memory
        id_[op.out] = id_[x], dtype_[op.out] = dtype_[x], id_[x] = 0;
      } else {
        make(op.out, wider(dtype_[x], dtype_[y]));
      }
      break;
    case CnnOpKind::Add: make(op.out, wider(dtype_[x], dtype_[y])); break;
    case CnnOpKind::Mul:
      make(op.out, wider(dtype_[x], dtype_[y]));
      if (training) save(i, x, true), save(i, y, true);
      break;
    case CnnOpKind::ScaleParam:
      make(op.out, wider(dtype_[x], r_.param_bytes));
      if (training) save(i, x, true);
      break;
    case CnnOpKind::BiasParam: make(op.out, wider(dtype_[x], r_.param_bytes)); break;
    case CnnOpKind::MaxPool:
      make(op.out, dtype_[x]);
      // int64 indices: saved in training; on CUDA max_pool2d always runs max_pool2d_with_indices (MaxPooling.cpp:
      // only the CPU skips them), so inference makes them too, freed at once (the ResNet-101 inference trace of
      // 2026-12-03: a 196 MiB int64 block after each 49 MiB stem pool output)
      if (training) save(i, x, true), extras_[i].push_back(s_.alloc(bytes(op.out, 8)));
      else transient(bytes(op.out, 8));
      break;
    case CnnOpKind::AvgPool:
    case CnnOpKind::Pad: make(op.out, dtype_[x]); break;
    case CnnOpKind::Cat:
      make(op.out, wider(dtype_[x], dtype_[y]));
      for (int t : op.rest) consume(t);
      break;
    case CnnOpKind::Attention:
      if (op.fused) {  // SDPA's flash kernel: the output and a logsumexp per query and head (fp32), no scores
        make(op.out, dtype_[x]);
        const u64 lse = s_.alloc(saturating_mul(saturating_mul(saturating_mul(op.heads, op.queries), r_.batch), 4));
        if (training) save(i, x, true), save(i, y, true), save(i, op.in2, true), save(i, op.out, true), extras_[i].push_back(lse);
        else s_.free(lse);
        consume(op.in2);
        break;
      }
      {  // modeling_mobilevit.py MobileViTSelfAttention (eager)
        const u64 scores = saturating_mul(saturating_mul(op.channels, r_.batch), dtype_[x]);
        const u64 raw = s_.alloc(scores), scaled = s_.alloc(scores);  // matmul(q, k^T), / sqrt(head size)
        s_.free(raw);
        const u64 probs = s_.alloc(scores);  // softmax: its output saved (attention dropout 0: the same tensor)
        s_.free(scaled);
        const u64 context = s_.alloc(bytes(x));  // matmul(probs, v), then permute(0, 2, 1, 3).contiguous()
        make(op.out, dtype_[x]);
        s_.free(context);
        if (training) save(i, x, true), save(i, y, true), save(i, op.in2, true), extras_[i].push_back(probs);
        else s_.free(probs);
        consume(op.in2);
      }
      break;
    case CnnOpKind::Pool:  // avg_pool2d's backward reads its input (derivatives.yaml)
      make(op.out, dtype_[x]);
      if (training) save(i, x, true);
      break;
    case CnnOpKind::MaxReduce:  // max(dim): values and int64 indices; its backward scatters by the indices
      make(op.out, dtype_[x]);
      if (training) extras_[i].push_back(s_.alloc(bytes(op.out, 8)));
      break;
    case CnnOpKind::VectorNorm:  // autocast runs norms in fp32
      make(op.out, r_.amp ? 4 : dtype_[x]);
      if (training) save(i, x, true), save(i, op.out, true);
      break;
    case CnnOpKind::Dropout:
      if (op.in_place && saves_[x] == 0 && uses_[x] == 1) {
        id_[op.out] = id_[x], dtype_[op.out] = dtype_[x], id_[x] = 0;
      } else {
        make(op.out, dtype_[x]);
      }
      if (training) extras_[i].push_back(s_.alloc(elements_[x]));  // the bool mask
      break;
  }
  consume(x), consume(y);
  for (int t : op.keeps) consume(t);
}

void cnn_events(Sequence& s, const CnnGraph& graph, const CnnRun& run) {
  CnnStep step(s, graph, run);
  step.weights();
  if (!run.trains) {  // a job of several batches: the first forward (its classifier's matmul makes the cuBLAS
    // workspace at its end), then a later one, whose peak holds that workspace (docs/estimator.md: a fresh process's
    // single batch peaks 32 MiB lower)
    step.infer();
    step.infer();
    return;
  }
  for (int k = 0; k < run.steps; ++k) step.train_step(k == 0);
}

}  // namespace vramdoc::estimator::detail
