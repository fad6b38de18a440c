// A convolutional classifier's step (forward_cnn.hpp), after the forward: cross-entropy on the logits, the
// backward in reverse op order (each input's gradient, accumulated in place into a gradient nobody else holds,
// else summed into a new tensor; the weights' gradients; what autograd saved freed after its op's backward)
// and the optimizer (its state in the first step, foreach temporaries, zero_grad).
#include "core/estimator/forward_cnn.hpp"

namespace vramdoc::estimator::detail {

// Cross-entropy on the logits (fp32 under autocast: a copy), log_softmax's output saved; its gradient.
void CnnStep::loss() {
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

void CnnStep::drop(u64 gid) {
  auto it = grad_refs_.find(gid);
  if (it == grad_refs_.end()) return;
  if (--it->second <= 0) grad_refs_.erase(it), s_.free(gid);
}

// The gradient `gid` (held by the caller) reaches tensor t: kept, or added in place into t's gradient when
// nobody else holds that one (autograd's InputBuffer), else summed into a new tensor.
void CnnStep::deliver(int t, u64 gid) {
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
void CnnStep::fresh(int t, u64 b) {
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

void CnnStep::pass(int t, u64 gout) {  // the output's gradient as it is (sums), cast where the dtype differs
  if (t < 0 || !needs_grad_[t]) return;
  if (bytes(t) == s_.bytes_of(gout)) {
    deliver(t, gout);
  } else {
    fresh(t, bytes(t));
  }
}

// The parameters' gradients (fp32 .grad under autocast, made from a 16-bit one for a cast weight).
void CnnStep::param_grads(const CnnOp& op, bool via_cast) {
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
void CnnStep::unsave_all(std::size_t i) {
  s_.free(extras_[i]);
  for (int t : saved_[i]) unsave(t);
  saved_[i].clear();
}

void CnnStep::backward(std::size_t i) {
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
    case CnnOpKind::Cat:  // narrow views of the gradient
      deliver(x, gout), deliver(y, gout);
      for (int t : op.rest) deliver(t, gout);
      break;
    case CnnOpKind::Attention:
      if (op.fused) {  // flash attention's backward: dq, dk, dv, an fp32 dq accumulator and softmax_d (fp32 per query and head)
        const u64 accumulator = s_.alloc(bytes(x, 4));
        const u64 softmax_d = s_.alloc(saturating_mul(saturating_mul(saturating_mul(op.heads, op.queries), r_.batch), 4));
        fresh(op.in2, bytes(op.in2)), fresh(y, bytes(y)), fresh(x, bytes(x));
        s_.free(accumulator), s_.free(softmax_d);
        break;
      }
      {  // matmul(probs, v)'s backward, softmax's, the scale's, matmul(q, k^T)'s
        const u64 scores = saturating_mul(saturating_mul(op.channels, r_.batch), dtype_[x]);
        const u64 grad_probs = s_.alloc(scores);
        fresh(op.in2, bytes(op.in2));
        const u64 grad_scores = s_.alloc(scores);
        s_.free(grad_probs);
        const u64 grad_raw = s_.alloc(scores);
        s_.free(grad_scores);
        fresh(x, bytes(x)), fresh(y, bytes(y));
        s_.free(grad_raw);
      }
      break;
    case CnnOpKind::MaxReduce:  // value_selecting_reduction_backward: zeros of the input's size, scattered into
      fresh(x, bytes(x));
      break;
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

void CnnStep::optimizer(bool first) {
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

}  // namespace vramdoc::estimator::detail
