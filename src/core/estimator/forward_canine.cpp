// A forward op by op (see forward_ops.hpp) for CANINE (modeling_canine.py, transformers 5.17): CanineModel.forward's
// three stacks of BERT-style post-norm layers (CanineLayer: its own eager attention, CanineSelfOutput, CanineOutput)
// at two lengths. The initial character layer attends locally (CanineAttention with local=True: chunks of
// local_transformer_stride characters), CharactersToMolecules downsamples by downsampling_rate, the deep encoder runs
// over the molecules, _repeat_molecules and ConvProjection bring them back to the characters, the final character
// layer attends over all of them.
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// CharactersToMolecules' length: Conv1d(kernel = stride = downsampling_rate) makes (seq - rate) / rate + 1 molecules,
// the last is truncated and [CLS] (the first character) concatenated in front.
u64 molecules(const ModelConfig& m, u64 seq) {
  const u64 rate = std::max<u64>(m.enc.downsampling_rate, 1);
  return seq >= rate ? (seq - rate) / rate + 1 : 1;
}

// This call is the model's forward, not a checkpointed layer's recomputation in the backward (which runs the layer
// module alone: no model locals, no tail).
bool model_pass(const Forward& f) { return !(f.train && f.r.o.grad_checkpointing); }

// The initial character layer: CanineAttention with local=True runs CanineSelfAttention on each chunk of
// local_transformer_stride characters (from and to the same chunk): estimated as the batch x chunks sequences of a
// chunk each, so the scores are batch x heads x seq x stride. Each chunk is a strided slice of the hidden states:
// query, key and value each reshape it into a copy for their matmul, which saves that copy (training). Before the layer
// CanineModel.forward builds _create_3d_attention_mask_from_input_mask's fp32 batch x seq x seq mask (a local to its
// return). Approximated: the chunks' outputs and their torch.cat are one tensor, the last chunk as long as the others.
u64 local_layer(Forward& f, u64 x) {
  const ModelConfig& m = f.r.m;
  const u64 seq = f.q_len, batch = f.batch, h = m.hidden_size;
  if (model_pass(f)) f.model_locals.push_back(f.s.alloc(mul(mul(batch, mul(seq, seq)), 4)));
  const u64 chunk = std::min(std::max<u64>(m.enc.local_stride, 1), seq), chunks = (seq + chunk - 1) / chunk;
  if (chunks > 1 && f.train) {
    for (int i = 0; i < 3; ++i) f.keep(f.s.alloc(f.bytes(h, f.act)));  // the Linears' folded copies of the slices
  }
  f.batch = mul(batch, chunks), f.q_len = f.kv_len = chunk;
  CacheIds cache{0, 0};
  const u64 out = post_norm_layer(f, LayerKind{}, x, cache);
  f.batch = batch, f.q_len = f.kv_len = seq;
  return out;
}

// CharactersToMolecules.forward on the initial character encoding `chars` (a local of CanineModel.forward to its
// return): transpose(1, 2) and Conv1d (its contiguous input a copy, saved), transpose back, the activation (its
// input saved), [CLS] cat the truncated molecules, LayerNorm: the deep encoder's input.
u64 downsample(Forward& f, u64 chars) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size;
  const u64 copy = f.s.alloc(f.bytes(h, f.act));
  f.keep(copy);
  f.q_len = f.kv_len = molecules(m, f.r.o.seq);
  const u64 conv = f.s.alloc(f.bytes(h, f.act));
  f.keep(conv);
  f.drop(copy);
  const u64 act = f.s.alloc(f.bytes(h, f.act)), cat = f.s.alloc(f.bytes(h, f.act));
  f.drop(conv), f.drop(act);
  if (model_pass(f)) f.model_locals.push_back(chars);
  else f.drop(chars);
  const u64 out = norm(f, cat, h, f.act);
  f.drop(cat);
  return out;
}

// _repeat_molecules (repeat_interleave of molecules[:, 1:] by downsampling_rate and of the last molecule by
// seq % rate + rate, their cat), the cat with the initial character encoding (2 x hidden), ConvProjection: the
// transposed concatenation padded (ConstantPad1d, upsampling_kernel_size - 1; the conv saves it), Conv1d, the
// activation (its input saved), LayerNorm (its input saved), dropout: the final character layer's input. The
// repeated molecules and the concatenation are CanineModel.forward's locals, alive to its return.
u64 upsample(Forward& f, u64 mols) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, seq = f.r.o.seq, rate = std::max<u64>(m.enc.downsampling_rate, 1), mol = f.q_len;
  const u64 first = f.s.alloc(mul(mul(f.batch, mul(mol > 0 ? mol - 1 : 0, rate)), mul(h, f.act)));
  const u64 last = f.s.alloc(mul(mul(f.batch, seq % rate + rate), mul(h, f.act)));
  f.q_len = f.kv_len = seq;
  const u64 repeated = f.s.alloc(f.bytes(h, f.act));
  f.s.free(first), f.s.free(last);
  const u64 concat = f.s.alloc(f.bytes(2 * h, f.act));
  const u64 pad = m.enc.upsampling_kernel > 0 ? m.enc.upsampling_kernel - 1 : 0;
  const u64 padded = f.s.alloc(mul(mul(f.batch, seq + pad), mul(2 * h, f.act)));
  f.keep(padded);
  if (model_pass(f)) f.model_locals.push_back(repeated), f.model_locals.push_back(concat);
  else f.drop(repeated), f.drop(concat);
  const u64 conv = f.s.alloc(f.bytes(h, f.act));
  f.keep(conv);
  f.drop(padded);
  const u64 act = f.s.alloc(f.bytes(h, f.act));
  f.drop(conv);
  const u64 n = norm(f, act, h, f.act);
  f.drop(act);
  const u64 out = dropout(f, n, h, f.act, m.residual_dropout);
  (void)mols;  // read through its views (molecules[:, 1:], molecules[:, -1:]): the caller holds it
  return out;
}

// CanineModel.forward returns: its locals go.
void end_of_model(Forward& f) {
  if (model_pass(f)) f.s.free(f.model_locals), f.model_locals.clear();
}

// Sequence classification reads the deep encoder's pooled output only: the upsampling and the final character layer
// still run (CanineModel.forward computes last_hidden_state), their autograd graph held by the model's output until
// CanineForSequenceClassification.forward returns, then freed unread (no gradients reach them). Run here after the
// deep encoder's last layer with their saved tensors apart, all freed at the model's return.
void forward_only_tail(Forward& f, u64 mols) {
  const u64 mol = f.q_len;
  std::vector<u64> layer_saved = f.take_saved();
  const u64 in = upsample(f, mols);
  CacheIds cache{0, 0};
  const u64 out = post_norm_layer(f, LayerKind{}, in, cache);
  f.drop(in);  // (saved by the final layer's projections in training)
  std::vector<u64> tail = f.take_saved();
  if (std::find(tail.begin(), tail.end(), out) == tail.end()) f.s.free(out);
  f.s.free(tail);
  for (u64 id : layer_saved) f.keep(id);
  f.q_len = f.kv_len = mol;
}

}  // namespace

std::vector<LayerKind> canine_layer_order(const ModelConfig& m) {
  std::vector<LayerKind> kinds;
  const u64 deep = std::min(m.enc.deep_layers, m.num_layers > 0 ? m.num_layers - 1 : 0);
  kinds.push_back(LayerKind{});  // initial_char_encoder's one layer (stage 0)
  for (u64 i = 0; i < deep; ++i) {
    LayerKind k{};
    k.stage = 1, k.stage_end = i + 1 == deep && m.num_layers == deep + 1;  // no final layer of its own: the tail
    kinds.push_back(k);
  }
  for (u64 i = deep + 1; i < m.num_layers; ++i) {  // final_char_encoder's (every task but sequence classification)
    LayerKind k{};
    k.stage = 2, k.shifted = i == deep + 1, k.stage_end = i + 1 == m.num_layers;
    kinds.push_back(k);
  }
  return kinds;
}

u64 canine_layer(Forward& f, LayerKind kind, u64 x) {
  if (kind.stage == 0) return downsample(f, local_layer(f, x));
  CacheIds cache{0, 0};
  if (kind.stage == 1) {
    const u64 out = post_norm_layer(f, LayerKind{}, x, cache);
    if (kind.stage_end) {
      if (model_pass(f)) forward_only_tail(f, out);
      end_of_model(f);
    }
    return out;
  }
  // the final character layer over all characters (CanineEncoder with local=False)
  const u64 in = kind.shifted ? upsample(f, x) : x;
  const u64 out = post_norm_layer(f, LayerKind{}, in, cache);
  if (in != x) f.drop(in);
  if (kind.stage_end) end_of_model(f);
  return out;
}

}  // namespace vramdoc::estimator::detail
