// The backward, shared by the one-GPU step (step_sequence.cpp) and one rank's replay
// (rank_sequence.cpp): the head's, each decoder layer's, the embeddings'. The traces' order
// (docs/estimator.md, "The backward, op by op"; llama3-m bf16, step 1): lm_head's weight gradient,
// its input's, the logits' gradient freed (under autocast then the fp32 ones); the final RMSNorm's
// 16-bit products, its weight's gradient, ~8 fp32 T x h temporaries, its input's gradient; per
// layer down_proj (weight, T x I input), act * up (two T x I), up_proj, SiLU, gate_proj (weight,
// T x h input each, summed), the norm as above, o_proj, SDPA (dq, dk, dv, a workspace; its saved
// tensors freed), RoPE on k and q, v/k/q_proj (weight, input, summed in place), the input norm;
// the embeddings' gradient, a tied weight's added to lm_head's (in place only under autocast: below).
// Modelled at layer granularity: a checkpointed layer is first run again op by op (its autocast
// copies made at each Linear and saved); then the saved tensors backwards, each one's gradient
// made (its shape), used by the next op back and freed with the saved tensor; the weights'
// gradients in backward order. The norms', SDPA's and RoPE's temporaries are left out; a broadcast product's two
// full-size input gradients are made where a layer names them (Forward::backward_transient: Mamba2's SSD).
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

// A weight's gradient: under autocast a Linear's arrives as the gradient of its 16-bit copy, which
// the copy's backward (to(float32)) turns into the fp32 gradient AccumulateGrad keeps.
u64 weight_gradient(Tape& s, u64 bytes, bool via_cast) {
  const u64 grad16 = via_cast ? s.alloc(bytes / 2, Use::Gradient) : 0, grad = s.alloc(bytes, Use::Gradient);
  s.free(grad16);
  return grad;
}

void saved_backward(Tape& s, const LayerGrads& g, std::vector<u64>& saved, std::vector<u64>& made,
                    const std::unordered_map<u64, u64>& transients) {
  std::size_t w = 0;
  u64 previous = 0;
  auto next_weight = [&] {  // the layer's weights backwards: the last op's first
    const std::size_t at = g.weights.size() - 1 - w++;
    made.push_back(weight_gradient(s, g.weights[at], at < g.via_cast.size() && g.via_cast[at]));
  };
  for (std::size_t i = saved.size(); i-- > 0;) {
    if (const auto t = transients.find(saved[i]); t != transients.end()) {  // Forward::backward_transient: MulBackward0's
      const u64 first = s.alloc(t->second), second = s.alloc(t->second);   // two full-size input gradients, each then
      s.free(first), s.free(second);                                         // reduced by the engine's sum_to
    }
    const u64 grad = s.alloc(s.bytes_of(saved[i]));
    s.free(previous);
    previous = grad;
    s.free(saved[i]);
    if (w < g.weights.size()) next_weight();
  }
  s.free(previous);
  while (w < g.weights.size()) next_weight();
  saved.clear();
}

}  // namespace

u64 layer_backward(Forward& f, const LayerGrads& g, LayerKind kind, u64 checkpoint, std::vector<u64>& saved, u64 dx,
                   std::vector<u64>& made) {
  if (checkpoint != 0) {  // non-reentrant checkpointing: the layer's forward again, its saved tensors kept
    std::vector<u64> none;
    f.s.free(recorded_layer(f, g.unlinked_casts, kind, checkpoint, saved, none));
  }
  const u64 next_dx = f.s.alloc(g.residual);
  saved_backward(f.s, g, saved, made, f.backward_transients);
  f.s.free(dx);
  f.s.free(checkpoint);
  return next_dx;
}

OuterGrads outer_grads(const WeightTensors& grads, bool tied, bool amp, u64 head_input, u64 residual) {
  OuterGrads g;
  g.input_first = grads.lm_head_at < grads.head.size() && grads.lm_head_at + 1 < grads.head.size();  // lm_head.bias follows
  g.head = grads.head, g.embed = grads.embed, g.tied = tied, g.head_input = head_input, g.residual = residual;
  if (tied) g.lm_head = grads.embed.front();
  if (grads.lm_head_at < g.head.size()) {
    g.lm_head = g.head[grads.lm_head_at];
    g.head.erase(g.head.begin() + static_cast<std::ptrdiff_t>(grads.lm_head_at));
  }
  g.lm_head_via_cast = amp && g.lm_head != 0;
  return g;
}

u64 head_backward(Tape& s, const OuterGrads& g, u64 loss, std::vector<u64>& head_saved, u64 workspace,
                  std::vector<u64>& made, u64& tied_share) {
  const u64 early = g.input_first ? s.alloc(g.head_input) : 0;
  const u64 weight16 = g.lm_head_via_cast ? s.alloc(g.lm_head / 2, Use::Gradient) : 0;
  u64 weight = weight16 == 0 ? s.alloc(g.lm_head, Use::Gradient) : 0;
  s.alloc(workspace, Use::Workspace);
  const u64 input = g.input_first ? early : s.alloc(g.head_input);
  s.free(loss);
  s.free(head_saved);
  const u64 dx = g.residual == g.head_input ? input : s.alloc(g.residual);
  if (dx != input) s.free(input);
  if (weight16 != 0) weight = s.alloc(g.lm_head, Use::Gradient), s.free(weight16);
  for (u64 bytes : g.head) made.push_back(s.alloc(bytes, Use::Gradient));
  if (g.tied) tied_share = weight;
  else if (weight != 0) made.push_back(weight);
  return dx;
}

void embeddings_backward(Tape& s, const OuterGrads& g, std::vector<u64>& saved, u64 tied_share, u64 dx,
                         std::vector<u64>& made, bool share_is_sum) {
  s.free(saved);
  const std::size_t shared = made.size();  // the tied weight is the embeddings' first
  for (u64 bytes : g.embed) made.push_back(s.alloc(bytes, Use::Gradient));
  if (tied_share != 0 && shared < made.size()) {
    if (!g.lm_head_via_cast && !share_is_sum) {  // out of place: the sum is a third vocab x hidden tensor
      const u64 sum = s.alloc(s.bytes_of(made[shared]), Use::Gradient);
      s.free(tied_share);
      tied_share = sum;
    }
    s.free(made[shared]);  // the sum (or lm_head's share, added to in place) becomes the .grad
    made[shared] = tied_share;
  }
  s.free(dx);
}

// An encoder-decoder's shared embedding reaches the decoder's embeddings a second time (lm_head's
// share first): the engine's input buffer adds the two out of place - the decoder's gradient, their
// sum, then both shares freed (bart-s / mbart-m train traces of 2026-12-02: three vocab x hidden
// tensors at once). The encoder's share, last, is added in place (embeddings_backward).
void decoder_embeddings_backward(Tape& s, const OuterGrads& g, u64& tied_share) {
  if (tied_share == 0 || g.lm_head == 0) return;
  const u64 own = s.alloc(g.lm_head, Use::Gradient), sum = s.alloc(g.lm_head, Use::Gradient);
  s.free(tied_share);
  s.free(own);
  tied_share = sum;
}

}  // namespace vramdoc::estimator::detail
