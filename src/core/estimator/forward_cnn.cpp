// A convolutional classifier's step tensor by tensor, as PyTorch 2.x runs it: the forward op by op
// (each op's output; under autocast the 16-bit copies of a convolution's input and weights, LayerNorm's
// fp32 copy; cuDNN's workspace inside each convolution, capture/conv_workspace.hpp), what autograd
// saves (cnn_graph.hpp: a convolution its input, BatchNorm its input, ReLU its output, ...) held until
// that op's backward; the backward in reverse op order (each input's gradient, accumulated in place into
// a gradient nobody else holds, else summed into a new tensor; the weights' gradients), the loss, and
// the optimizer (its state in the first step, foreach temporaries, zero_grad). Inference frees each
// tensor once its last consumer ran.
#include <algorithm>
#include <unordered_map>

#include "core/capture/conv_workspace.hpp"
#include "core/estimator/cnn_step.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

using u64 = std::uint64_t;
constexpr u64 kCublasWorkspace = 32 * MiB;  // one per (thread, stream): CublasHandlePool.cpp, 32 MiB on Hopper

class CnnStep {
 public:
  CnnStep(Sequence& s, const CnnGraph& g, const CnnRun& r) : s_(s), g_(g), r_(r) {
    const std::size_t n = g.tensors.size();
    elements_.resize(n), dtype_.assign(n, 0), id_.assign(n, 0), uses_.assign(n, 0), saves_.assign(n, 0);
    grad_.assign(n, 0), needs_grad_.assign(n, false), extras_.resize(g.ops.size()), saved_.resize(g.ops.size());
    for (std::size_t t = 0; t < n; ++t) elements_[t] = saturating_mul(g.tensors[t], r.batch);
    for (const CnnOp& op : g.ops) {
      needs_grad_[op.out] = !op.params.empty() || (op.in0 >= 0 && needs_grad_[op.in0]) || (op.in1 >= 0 && needs_grad_[op.in1]) ||
                            (op.in2 >= 0 && needs_grad_[op.in2]);
    }
  }

  void weights() {
    for (const CnnOp& op : g_.ops) {
      for (u64 p : op.params) weights_.push_back(s_.alloc(saturating_mul(p, r_.param_bytes), Use::Weight));
      if (op.buffers > 0) {  // running_mean, running_var, num_batches_tracked
        s_.alloc(saturating_mul(op.buffers / 2, r_.param_bytes), Use::Weight);
        s_.alloc(saturating_mul(op.buffers / 2, r_.param_bytes), Use::Weight);
        s_.alloc(8, Use::Weight);
      }
    }
  }

  void train_step(bool first) {
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

  void infer() {
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

  void begin_step() {
    for (const CnnOp& op : g_.ops) {
      if (op.in0 >= 0) ++uses_[op.in0];
      if (op.in1 >= 0) ++uses_[op.in1];
      if (op.in2 >= 0) ++uses_[op.in2];
      for (int t : op.keeps) ++uses_[t];
    }
    ++uses_[g_.logits];  // the loss (training) or the caller (inference) reads the logits
    dtype_[0] = r_.amp ? 4 : r_.compute_bytes;  // pixel_values: fp32 under autocast, else the model's dtype
    id_[0] = s_.alloc(bytes(0));
  }

  void release(int t) {
    if (t <= 0 || uses_[t] > 0 || saves_[t] > 0 || id_[t] == 0) return;  // the pixels are the caller's
    s_.free(id_[t]);
    id_[t] = 0;
  }
  void consume(int t) {
    if (t < 0) return;
    --uses_[t];
    release(t);
  }
  void save(std::size_t op, int t, bool training) {
    if (!training) return;
    ++saves_[t];
    saved_[op].push_back(t);
  }
  void unsave(int t) {
    --saves_[t];
    release(t);
  }
  u64 make(int t, u64 dtype) {
    dtype_[t] = dtype;
    id_[t] = s_.alloc(bytes(t));
    return id_[t];
  }
  u64 conv_workspace(const CnnOp& op, capture::ConvPass pass) const {
    capture::ConvCall c;
    c.element_bytes = static_cast<unsigned>(r_.compute_bytes);
    c.n = r_.batch, c.c_in = op.conv.c_in, c.c_out = op.conv.c_out, c.in_hw = op.conv.in_hw, c.out_hw = op.conv.out_hw;
    c.kernel = op.conv.kernel, c.stride = op.conv.stride, c.groups = op.conv.groups;
    c.forward = pass == capture::ConvPass::Forward, c.data_grad = pass == capture::ConvPass::DataGrad;
    c.weight_grad = pass == capture::ConvPass::WeightGrad;
    return capture::cudnn_conv_workspace_bytes(c, pass);
  }
  void transient(u64 b, Use use = Use::Workspace) { s_.free(s_.alloc(b, use)); }

  // A convolution or Linear: its input in the compute dtype (autocast's copy), the weights' 16-bit copies
  // (autocast; in no_grad made per call), the output, cuDNN's workspace.
  void matmul_forward(std::size_t i, bool training) {
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

  void forward(std::size_t i, bool training) {
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
        if (training) save(i, x, true), extras_[i].push_back(s_.alloc(bytes(op.out, 8)));  // int64 indices
        break;
      case CnnOpKind::AvgPool:
      case CnnOpKind::Pad: make(op.out, dtype_[x]); break;
      case CnnOpKind::Cat: make(op.out, wider(dtype_[x], dtype_[y])); break;
      case CnnOpKind::Attention: {  // modeling_mobilevit.py MobileViTSelfAttention (eager)
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
        break;
      }
      case CnnOpKind::Pool:  // avg_pool2d's backward reads its input (derivatives.yaml)
        make(op.out, dtype_[x]);
        if (training) save(i, x, true);
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

  // Cross-entropy on the logits (fp32 under autocast: a copy), log_softmax's output saved; its gradient.
  void loss() {
    const int l = g_.logits;
    const u64 fp32 = r_.amp ? 4 : dtype_[l];
    const u64 cast = fp32 != dtype_[l] ? s_.alloc(bytes(l, fp32), Use::Logits) : 0;
    const u64 log_probs = s_.alloc(bytes(l, fp32), Use::Logits);
    s_.free(cast);
    consume(l);
    const u64 nll = s_.alloc(bytes(l, fp32), Use::Logits), lsm = s_.alloc(bytes(l, fp32), Use::Logits);
    s_.free(nll), s_.free(log_probs);
    u64 grad = lsm;
    if (fp32 != dtype_[l]) grad = s_.alloc(bytes(l), Use::Logits), s_.free(lsm);
    grad_refs_[grad] = 1;
    grad_[l] = grad;
  }

  void hold(u64 gid) { ++grad_refs_[gid]; }
  void drop(u64 gid) {
    auto it = grad_refs_.find(gid);
    if (it == grad_refs_.end()) return;
    if (--it->second <= 0) grad_refs_.erase(it), s_.free(gid);
  }
  // The gradient `gid` (held by the caller) reaches tensor t: kept, or added in place into t's gradient when
  // nobody else holds that one (autograd's InputBuffer), else summed into a new tensor.
  void deliver(int t, u64 gid) {
    if (t < 0 || !needs_grad_[t] || gid == 0) return;
    if (grad_[t] == 0) {
      grad_[t] = gid, hold(gid);
      return;
    }
    if (grad_refs_[grad_[t]] == 1) return;  // in place
    const u64 sum = s_.alloc(bytes(t));
    grad_refs_[sum] = 1;
    drop(grad_[t]);
    grad_[t] = sum;
  }
  // A new gradient of `b` bytes for tensor t (cast to t's dtype when it differs: one more tensor).
  void fresh(int t, u64 b) {
    if (t < 0 || !needs_grad_[t]) return;
    u64 gid = s_.alloc(b);
    if (b != bytes(t)) {
      const u64 cast = s_.alloc(bytes(t));
      s_.free(gid);
      gid = cast;
    }
    grad_refs_[gid] = 1;
    deliver(t, gid);
    drop(gid);
  }
  void pass(int t, u64 gout) {  // the output's gradient as it is (sums), cast where the dtype differs
    if (t < 0 || !needs_grad_[t]) return;
    if (bytes(t) == s_.bytes_of(gout)) {
      deliver(t, gout);
    } else {
      fresh(t, bytes(t));
    }
  }
  // The parameters' gradients (fp32 .grad under autocast, made from a 16-bit one for a cast weight).
  void param_grads(const CnnOp& op, bool via_cast) {
    for (u64 p : op.params) {
      const u64 half = via_cast ? s_.alloc(saturating_mul(p, 2)) : 0;
      // a standardised weight's gradient goes through batch_norm's backward into the weight's (one more tensor)
      const u64 through = op.standardized && p == op.params.front() ? s_.alloc(saturating_mul(p, r_.param_bytes)) : 0;
      s_.free(through);
      grads_.push_back(s_.alloc(saturating_mul(p, r_.param_bytes), Use::Gradient));
      s_.free(half);
    }
  }
  // The op's backward ran: what autograd kept for it goes.
  void unsave_all(std::size_t i) {
    s_.free(extras_[i]);
    for (int t : saved_[i]) unsave(t);
    saved_[i].clear();
  }

  void backward(std::size_t i) {
    const CnnOp& op = g_.ops[i];
    const int x = op.in0, y = op.in1;
    const u64 gout = grad_[op.out];
    if (!needs_grad_[op.out] || gout == 0) {
      unsave_all(i);
      return;
    }
    switch (op.kind) {
      case CnnOpKind::Conv:
      case CnnOpKind::Linear: {
        const bool conv = op.kind == CnnOpKind::Conv;
        if (!conv && !backward_workspace_) s_.alloc(kCublasWorkspace, Use::Workspace), backward_workspace_ = true;
        if (needs_grad_[x]) {
          const u64 gi = s_.alloc(bytes(x, r_.compute_bytes));
          if (conv) transient(conv_workspace(op, capture::ConvPass::DataGrad));
          grad_refs_[gi] = 1;
          if (dtype_[x] != r_.compute_bytes) {
            const u64 cast = s_.alloc(bytes(x));
            drop(gi);
            grad_refs_[cast] = 1;
            deliver(x, cast), drop(cast);
          } else {
            deliver(x, gi), drop(gi);
          }
        }
        param_grads(op, r_.amp);
        if (conv) transient(conv_workspace(op, capture::ConvPass::WeightGrad));
        break;
      }
      case CnnOpKind::BatchNorm:
        fresh(x, bytes(x));
        param_grads(op, false);
        break;
      case CnnOpKind::LayerNorm: {
        const u64 dtype = r_.amp ? 4 : dtype_[x];
        if (op.permuted_input) transient(bytes(x, dtype), Use::Activation);
        fresh(x, bytes(x, dtype));
        param_grads(op, false);
        break;
      }
      case CnnOpKind::Act:
        fresh(x, bytes(x));
        break;
      case CnnOpKind::Sigmoid:
        fresh(x, bytes(x));
        break;
      case CnnOpKind::AddInPlace:
      case CnnOpKind::Add: pass(x, gout), pass(y, gout); break;
      case CnnOpKind::Mul: {
        fresh(x, bytes(x));
        if (elements_[y] < elements_[x]) transient(bytes(x), Use::Activation);  // grad * x before the sum to y's shape
        fresh(y, bytes(y));
        break;
      }
      case CnnOpKind::ScaleParam:
        fresh(x, bytes(x));
        transient(bytes(op.out), Use::Activation);  // grad * x, summed to the parameter's shape
        param_grads(op, false);
        break;
      case CnnOpKind::BiasParam:
        pass(x, gout);
        param_grads(op, false);
        break;
      case CnnOpKind::MaxPool:
        fresh(x, bytes(x));
        break;
      case CnnOpKind::AvgPool:
      case CnnOpKind::Pool:
      case CnnOpKind::Pad: fresh(x, bytes(x)); break;
      case CnnOpKind::Cat: deliver(x, gout), deliver(y, gout); break;  // narrow views of the gradient
      case CnnOpKind::Attention: {  // matmul(probs, v)'s backward, softmax's, the scale's, matmul(q, k^T)'s
        const u64 scores = saturating_mul(saturating_mul(op.channels, r_.batch), dtype_[x]);
        const u64 grad_probs = s_.alloc(scores);
        fresh(op.in2, bytes(op.in2));
        const u64 grad_scores = s_.alloc(scores);
        s_.free(grad_probs);
        const u64 grad_raw = s_.alloc(scores);
        s_.free(grad_scores);
        fresh(x, bytes(x)), fresh(y, bytes(y));
        s_.free(grad_raw);
        break;
      }
      case CnnOpKind::VectorNorm:
        fresh(x, bytes(x, dtype_[op.out]));
        break;
      case CnnOpKind::Dropout:
        fresh(x, bytes(x));
        break;
    }
    // the engine: the function's inputs (the output's gradient) go when it returns, then release_variables()
    grad_[op.out] = 0;
    drop(gout);
    unsave_all(i);
  }

  void optimizer(bool first) {
    const bool adam = r_.optimizer == Optimizer::AdamW || r_.optimizer == Optimizer::Adam;
    const u64 states = adam || r_.optimizer == Optimizer::AdamW8bit ? 2 : r_.optimizer == Optimizer::SgdMomentum || r_.optimizer == Optimizer::Adafactor ? 1 : 0;
    const u64 state_bytes = r_.optimizer == Optimizer::AdamW8bit ? 1 : r_.param_bytes;
    std::vector<u64> sizes;
    for (const CnnOp& op : g_.ops) sizes.insert(sizes.end(), op.params.begin(), op.params.end());
    if (first) {
      for (u64 p : sizes) {
        for (u64 k = 0; k < states; ++k) states_.push_back(s_.alloc(saturating_mul(p, state_bytes), Use::State));
      }
    }
    if (adam) {  // _foreach_sqrt(exp_avg_sq): one temporary per parameter
      std::vector<u64> temps;
      for (u64 p : sizes) temps.push_back(s_.alloc(saturating_mul(p, r_.param_bytes)));
      s_.free(temps);
    }
    s_.free(grads_);  // zero_grad(set_to_none=True)
  }
};

}  // namespace

void cnn_events(Sequence& s, const CnnGraph& graph, const CnnRun& run) {
  CnnStep step(s, graph, run);
  step.weights();
  if (!run.trains) {  // a first forward (its classifier's matmul makes the cuBLAS workspace), then the measured one
    step.infer();
    step.infer();
    return;
  }
  for (int k = 0; k < run.steps; ++k) step.train_step(k == 0);
}

}  // namespace vramdoc::estimator::detail
