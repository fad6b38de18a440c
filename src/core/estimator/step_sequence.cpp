// The allocation sequence of training, tensor by tensor, in the order PyTorch makes and frees them:
// the weights, then three steps. The forward runs op by op (forward_ops.hpp) with autograd keeping
// each layer's saved tensors (with gradient checkpointing only the layers' inputs, the layer run
// again in the backward); the backward frees them layer by layer while the gradients appear; the
// optimizer's state arrives in step one, its foreach temporaries and the gradients go at the end of
// each step. Inference: infer_sequence.cpp. Replaying it through CachingAllocator gives reserved.
#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/forward_ops.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

constexpr u64 kCublasWorkspace = 32 * MiB;  // a cuBLAS workspace: training makes two (traces)

// What one training step allocates and frees beyond the forward, given the model's tensors.
struct TrainPlan {
  WeightTensors weights, grads;
  LayerGrads dense, moe, cross;  // what a layer's backward makes (a dense layer, a MoE layer, a decoder layer with cross-attention)
  std::vector<LayerGrads> stages;  // Swin: a layer of each stage
  std::vector<LayerGrads> mixers;  // a hybrid: a layer of each mixer x {dense, MoE} (WeightTensors::mixers)
  OuterGrads outer;                // and the head's and the embeddings'
  const LayerGrads& layer(LayerKind kind) const {
    if (!mixers.empty()) return mixers[mixer_slot(kind)];
    return kind.cross ? cross : !stages.empty() ? stages[std::min<std::size_t>(kind.stage, stages.size() - 1)] : kind.moe ? moe : dense;
  }
  std::vector<LayerKind> kinds;
  u64 residual = 0, logits_act = 0, logits_fp32 = 0, softcap = 0, nll_cast = 0, first_stream = 0;
  u64 biased = 0;  // BART: lm_logits + final_logits_bias, the loss's input
  u64 scaled = 0;  // Cohere, Granite: the logits times a constant, the loss's input
  u64 states_per_tensor = 0;  // optimizer states per trainable tensor (same bytes)
  bool foreach_temporaries = false, checkpointing = false;
};

TrainPlan train_plan(const Run& r) {
  TrainPlan p;
  const u64 tokens = mul(r.o.batch, r.o.seq);
  p.checkpointing = r.o.grad_checkpointing;
  p.weights = weight_tensors(r, r.o.mode == Mode::Qlora ? 4 : r.w.weight);
  if (adapters(r.o)) {  // the adapters' A and B, fp32, as one layer's share
    const u64 layers = layer_order(r.m).size(), per_layer = r.s.adapter_params / std::max<u64>(layers, 1);
    p.grads.stages.resize(p.weights.stages.size());
    p.grads.mixers.resize(p.weights.mixers.size());
    std::vector<LayerWeights*> kinds = {&p.grads.dense, &p.grads.moe, &p.grads.cross};
    for (LayerWeights& l : p.grads.stages) kinds.push_back(&l);
    for (LayerWeights& l : p.grads.mixers) kinds.push_back(&l);
    for (LayerWeights* l : kinds) l->tensors = {mul(per_layer / 2, 4), mul(per_layer - per_layer / 2, 4)};
    std::vector<LayerWeights*> held = {&p.weights.dense, &p.weights.moe, &p.weights.cross};
    for (LayerWeights& l : p.weights.stages) held.push_back(&l);
    for (LayerWeights& l : p.weights.mixers) held.push_back(&l);
    for (LayerWeights* l : held) l->tensors.insert(l->tensors.end(), p.grads.dense.tensors.begin(), p.grads.dense.tensors.end());
  } else {
    p.grads = weight_tensors(r, r.w.weight, true);
    p.outer.tied = r.m.tie_word_embeddings && !p.grads.embed.empty();
  }
  p.kinds = layer_order(r.m);
  p.residual = mul(mul(tokens, r.m.hidden_size), r.w.wide);
  const HeadShape head = head_shape(r);
  LossShape loss = loss_shape(r);
  if (r.o.task == Task::CausalLm) loss.elements /= std::max<u64>(r.o.tensor_parallel, 1);  // a rank's share of the vocabulary
  p.logits_act = mul(loss.elements, r.w.act);
  p.logits_fp32 = mul(loss.elements, loss.fp32 ? 4 : r.w.act);
  p.softcap = r.m.final_logit_softcap > 0 ? p.logits_act : 0;
  if (r.m.enc.logits_bias) {  // the sum with the bias buffer: fp32 under autocast, so is the loss then
    p.biased = mul(loss.elements, r.w.amp ? 4 : r.w.act);
    p.logits_fp32 = std::max(p.logits_fp32, p.biased);
  }
  if (r.m.scaled_logits && r.o.task == Task::CausalLm) p.scaled = p.logits_act;
  // ProphetNet's _compute_loss: logits.transpose(0, 1).contiguous(), a logits-sized copy, is log_softmax's input
  if (r.m.enc.ngram > 0) p.biased = p.logits_act, p.first_stream = p.logits_act / r.m.enc.ngram;
  if (loss.autocast_nll) p.nll_cast = mul(loss.elements, 4);
  const bool adam = r.o.optimizer == Optimizer::AdamW || r.o.optimizer == Optimizer::Adam;
  p.states_per_tensor = adam ? 2 : r.o.optimizer == Optimizer::SgdMomentum ? 1 : 0;
  p.foreach_temporaries = adam;
  p.dense = {p.grads.dense.tensors, p.grads.dense.via_cast, p.weights.dense.unlinked_casts, p.residual};
  p.moe = {p.grads.moe.tensors, p.grads.moe.via_cast, p.weights.moe.unlinked_casts, p.residual};
  // an encoder-decoder's decoder layers run on the target tokens; Swin's stage s on tokens / 4^s at width x 2^s
  p.cross = {p.grads.cross.tensors, p.grads.cross.via_cast, p.weights.cross.unlinked_casts, mul(mul(head.tokens, r.m.hidden_size), r.w.wide)};
  for (std::size_t i = 0; i < p.grads.stages.size(); ++i) {
    const u64 quarter = u64{1} << (2 * std::min<std::size_t>(i, 31));
    p.stages.push_back({p.grads.stages[i].tensors, p.grads.stages[i].via_cast, p.weights.stages[i].unlinked_casts,
                        mul(mul(tokens / quarter, r.m.hidden_size << std::min<std::size_t>(i, 31)), r.w.wide)});
  }
  for (std::size_t i = 0; i < p.grads.mixers.size(); ++i) {
    p.mixers.push_back({p.grads.mixers[i].tensors, p.grads.mixers[i].via_cast, p.weights.mixers[i].unlinked_casts, p.residual});
  }
  p.outer = outer_grads(p.grads, p.outer.tied, r.w.amp, mul(mul(head.rows, head.width), r.w.act),
                        mul(mul(head.tokens, head.width), r.w.wide));
  return p;
}

struct Recorded {
  std::vector<std::vector<u64>> layers;  // each layer's saved tensors (empty when checkpointed)
  std::vector<u64> head;                 // the final norm's and lm_head's
  std::vector<u64> embeddings;           // before the first layer (GPT-2's embedding dropout mask)
  std::vector<u64> checkpoints;          // the layers' inputs (gradient checkpointing)
  std::vector<u64> hidden_states;        // the layers' inputs the model returns (ModelConfig::all_hidden_states)
};

// The forward: embeddings, masks, rotary tables (the first step's first matmul makes a cuBLAS
// workspace), the layers, the final norm and lm_head's saved input (the logits: loss_and_its_gradient).
Recorded forward(Forward& f, const TrainPlan& p, bool first) {
  Recorded rec;
  f.train = true;
  const bool decoder = f.r.m.kind == ModelKind::Decoder;
  // (an encoder's at its first Linear, after that Linear's output: the bert-s, xlmr-b, t5-s and dinov2-s traces)
  if (!decoder && first) f.pending_workspace = kCublasWorkspace;
  Prelude pre = decoder ? prelude(f, p.kinds, first ? kCublasWorkspace : 0) : encoder_prelude(f, 0, false);
  rec.embeddings = f.take_saved();
  std::vector<u64> cache;
  u64 x = pre.hidden;
  const bool cache_on = f.use_cache;
  f.use_cache = cache_on && decoder;
  for (std::size_t l = 0; l < p.kinds.size(); ++l) {
    if (p.kinds[l].cross && f.memory == 0) {  // the encoder's output becomes the decoder's memory
      x = to_decoder(f, pre, x);
      f.use_cache = cache_on;
      std::vector<u64> embed = f.take_saved();
      rec.embeddings.insert(rec.embeddings.end(), embed.begin(), embed.end());
    }
    std::vector<u64> saved;
    const std::vector<u64>& casts = p.weights.layer(p.kinds[l]).unlinked_casts;
    const u64 out = p.checkpointing ? checkpointed_layer(f, casts, p.kinds[l], x) : recorded_layer(f, casts, p.kinds[l], x, saved, cache);
    const bool kept = std::find(saved.begin(), saved.end(), x) != saved.end();
    if (p.checkpointing) rec.checkpoints.push_back(x);
    else if (l == 0 && pre.hold_first_input) pre.held.push_back(kept ? 0 : x);  // the embeddings' output lives to the model's end
    else if (f.r.m.all_hidden_states && !kept) rec.hidden_states.push_back(x);
    else if (!kept) f.s.free(x);
    rec.layers.push_back(std::move(saved));
    x = out;
  }
  if (f.pending_workspace != 0) f.s.alloc(f.pending_workspace, Use::Workspace), f.pending_workspace = 0;  // no Linear ran
  rec.head = record_head(f, x, p.weights.lm_head_cast);
  f.s.free(pre.held), f.s.free(cache), f.s.free(f.position_bias), f.s.free(f.cross_bias);
  // the cross-attention's cached keys and values are the ones SDPA saved: freed by their layer's backward
  for (u64 id : f.cross_cache) {
    if (!f.saved_by_a_layer(id)) f.s.free(id);
  }
  f.cross_cache.clear();
  if (!f.saved_by_a_layer(f.memory)) f.s.free(f.memory);  // (saved: the layers' backward frees it)
  f.forget_saved();
  f.memory = 0, f.position_bias = f.cross_bias = 0, f.q_len = f.kv_len = f.r.o.seq, f.hidden = 0;
  return rec;
}


void optimizer_step(Tape& s, const TrainPlan& p, bool first, std::vector<u64>& states, std::vector<u64>& grads) {
  // optimizer state and foreach temporaries in model.parameters() order: embeddings, layers, head
  std::vector<u64> trainable = p.grads.embed;
  for (LayerKind kind : p.kinds) {
    const std::vector<u64>& layer = p.grads.layer(kind).tensors;
    trainable.insert(trainable.end(), layer.begin(), layer.end());
  }
  trainable.insert(trainable.end(), p.grads.head.begin(), p.grads.head.end());
  if (first) {
    for (u64 b : trainable) {
      for (u64 k = 0; k < p.states_per_tensor; ++k) states.push_back(s.alloc(b, Use::State));
    }
  }
  if (p.foreach_temporaries) {  // _foreach_sqrt(exp_avg_sq): one temporary per parameter
    std::vector<u64> temps;
    for (u64 b : trainable) temps.push_back(s.alloc(b));
    s.free(temps);
  }
  s.free(grads);  // zero_grad(set_to_none=True)
}

void train_step(Sequence& s, Forward& f, const TrainPlan& p, bool first, std::vector<u64>& states) {
  s.stage(Stage::Forward);
  Recorded rec = forward(f, p, first);
  std::vector<u64> grads;
  s.stage(Stage::Loss);
  // the hidden states the model returned go when the causal LM's forward returns, after its loss (with autocast's cache)
  f.autocast_cache.insert(f.autocast_cache.end(), rec.hidden_states.begin(), rec.hidden_states.end());
  const u64 logits_grad = loss_and_its_gradient(s, p.logits_act, p.logits_fp32, p.softcap, f.autocast_cache, p.biased, p.scaled,
                                                p.nll_cast, p.first_stream);
  u64 tied_share = 0;  // the second workspace: at lm_head's backward matmuls (traces)
  u64 dx = head_backward(s, p.outer, logits_grad, rec.head, first ? kCublasWorkspace : 0, grads, tied_share);
  s.stage(Stage::Backward);
  const ModelConfig& m = f.r.m;
  const bool decoder_embeddings = m.kind == ModelKind::EncoderDecoder && p.outer.tied;
  for (std::size_t l = p.kinds.size(); l-- > 0;) {
    if (decoder_embeddings && l + 1 == m.enc.encoder_layers) decoder_embeddings_backward(s, p.outer, tied_share);
    dx = layer_backward(f, p.layer(p.kinds[l]), p.kinds[l], p.checkpointing ? rec.checkpoints[l] : 0, rec.layers[l], dx, grads);
  }
  s.free(f.saved_mask), f.saved_mask = 0;  // the first layer's SDPA let go of it
  embeddings_backward(s, p.outer, rec.embeddings, tied_share, dx, grads, decoder_embeddings);
  s.stage(Stage::Optimizer);
  optimizer_step(s, p, first, states, grads);
}

// The bytes of `ids` that are activations (the cache copies SDPA saves included; not the autocast
// weight copies, which the phases count apart).
u64 activation_bytes(const Sequence& s, const std::vector<u64>& ids) {
  u64 sum = 0;
  for (u64 id : ids) sum = saturating_add(sum, s.bytes_of(id) - s.bytes_of(id, Use::Cast));
  return sum;
}

}  // namespace

SavedBytes saved_bytes(const Run& r) {
  Sequence s;
  Forward f(s, r);
  f.use_cache = !r.o.grad_checkpointing;
  const TrainPlan p = train_plan(r);
  f.train = true;
  Prelude pre = prelude(f, p.kinds, 0);
  f.take_saved();
  SavedBytes out;
  out.mask = s.bytes_of(f.saved_mask);
  for (const auto& [kind, count] : layer_kinds(r.m)) {
    std::vector<u64> saved, cache;
    const u64 x = s.alloc(p.residual), y = recorded_layer(f, p.weights.layer(kind).unlinked_casts, kind, x, saved, cache);
    const u64 one = activation_bytes(s, saved);
    out.all_layers = saturating_add(out.all_layers, saturating_mul(one, count));
    out.largest_layer = std::max(out.largest_layer, one);
    s.free(saved), s.free(cache), s.free(x), s.free(y);
  }
  out.head = activation_bytes(s, record_head(f, s.alloc(p.residual), 0));
  return out;
}

std::vector<AllocEvent> step_events(const Run& r, std::size_t* setup_events) {
  Sequence s;
  if (trains(r.o)) training_events(s, r);
  else inference_events(s, r);
  if (setup_events != nullptr) *setup_events = s.setup_events();
  return s.take();
}

void training_events(Sequence& s, const Run& r) {
  const TrainPlan p = train_plan(r);
  for (u64 b : p.weights.embed) s.alloc(b, Use::Weight);
  for (LayerKind kind : p.kinds) {
    for (u64 b : p.weights.layer(kind).tensors) s.alloc(b, Use::Weight);
  }
  for (u64 b : p.weights.head) s.alloc(b, Use::Weight);
  release_tied_head(s, r, r.o.mode == Mode::Qlora ? 4 : r.w.weight);
  Forward f(s, r);
  f.use_cache = !p.checkpointing;  // transformers turns the cache off under gradient checkpointing
  std::vector<u64> states;
  for (int step = 0; step < 3; ++step) train_step(s, f, p, step == 0, states);
}

u64 loss_and_its_gradient(Tape& s, u64 logits_act, u64 logits_fp32, u64 softcap, std::vector<u64>& autocast_cache,
                          u64 biased, u64 scaled, u64 nll_cast, u64 first_stream) {
  u64 logits = s.alloc(logits_act, Use::Logits), held = 0;
  const u64 stream = s.alloc(first_stream, Use::Logits);
  const u64 input = biased != 0 ? biased : scaled;  // the loss's input when it is not the logits themselves
  if (input != 0) {
    const u64 sum = s.alloc(input, Use::Logits);
    if (stream != 0) held = logits;  // ProphetNet's predict_logits: a local of the forward
    else s.free(logits);
    logits = sum;
  }
  const u64 tanh = s.alloc(softcap, Use::Logits);
  const u64 upcast = (input != 0 ? input : logits_act) == logits_fp32 ? 0 : s.alloc(logits_fp32, Use::Logits);
  const u64 log_probs = s.alloc(logits_fp32, Use::Logits);
  const u64 nll_input = s.alloc(nll_cast, Use::Logits);  // under autocast nll_loss's fp32 copy (saved)
  s.free(upcast), s.free(logits);
  s.free(held), s.free(stream);  // the model's forward returns
  s.free(autocast_cache);
  u64 nll_grad = s.alloc(nll_cast != 0 ? nll_cast : logits_fp32, Use::Logits);
  if (nll_cast != 0) {  // NllLossBackward's saved copy released, ToCopyBackward's 16-bit cast of its gradient
    s.free(nll_input);
    const u64 cast = s.alloc(logits_fp32, Use::Logits);
    s.free(nll_grad);
    nll_grad = cast;
  }
  const u64 lsm_grad = s.alloc(logits_fp32, Use::Logits);
  s.free(nll_grad), s.free(log_probs);
  const u64 grad16 = logits_act == logits_fp32 ? 0 : s.alloc(logits_act, Use::Logits);
  if (grad16 != 0) s.free(lsm_grad);
  u64 out = grad16;
  if (scaled != 0) out = s.alloc(scaled, Use::Logits), s.free(grad16);  // MulBackward / DivBackward: grad * scale
  s.free(lsm_grad), s.free(tanh);
  return out;
}

}  // namespace vramdoc::estimator::detail
