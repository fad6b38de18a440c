// The model's weights as the allocator sees them: tensor by tensor, in the order the model's
// constructor creates them, with what building it on the GPU leaves behind.
#include <algorithm>

#include "core/estimator/encoders.hpp"
#include "core/estimator/forward_ops.hpp"
#include "core/estimator/hybrid.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

}  // namespace

// A model built on the GPU (from_config under a CUDA device, as measured) creates lm_head with its own
// weight last and frees it when post_init() ties it to the embeddings: one free block of its size
// before the first step. Loading a quantised model (or from the meta device) makes no such block.
// transformers 5 builds an encoder-decoder's stacks with embeddings of their own (T5Stack, BartEncoder,
// BartDecoder: nn.Embedding(vocab, d_model)) that post_init() ties to `shared`: two more blocks of the
// embeddings' size, freed before the first step (the mt5-s and mbart-m traces of 2026-12-01-b: four
// vocabulary-sized blocks live while building). Whisper's encoder has none. Large blocks get
// segments of their own, so where they sit among the weights changes no reserved byte.
// When they are freed depends on which post_init() ties them. BART-style classes build the base model
// (BartModel, MBartModel, ...), whose own __init__ ends in post_init(): the stacks' copies are freed
// before the head's class makes lm_head, which reuses one of their blocks. T5's relatives
// (T5ForConditionalGeneration, MT5-, UMT5-, LongT5-, SwitchTransformersForConditionalGeneration) build
// `shared`, both stacks and lm_head in one __init__ with one post_init() at its end: all four are
// live together (the mt5-s seq2seq trace of 2026-12-03: four vocabulary-sized segments, three freed).
void release_tied_head(Tape& s, const Run& r, u64 elem_width) {
  if (effective_quant(r.m, r.o).method != QuantMethod::None) return;
  const bool one_init = r.m.family == Family::T5;
  u64 encoder = 0, decoder = 0;
  if (r.m.kind == ModelKind::EncoderDecoder && r.m.family != Family::Whisper) {
    const u64 copy = mul(mul(r.m.hidden_size, r.m.vocab_size), elem_width);
    encoder = s.alloc(copy, Use::Weight), decoder = s.alloc(copy, Use::Weight);
    if (!one_init) s.free(encoder), s.free(decoder);
  }
  const u64 width = r.m.kind == ModelKind::Decoder ? r.m.hidden_size : mlm_width(r.m);  // ELECTRA's MLM head
  const u64 head = r.m.tie_word_embeddings ? s.alloc(mul(mul(width, r.m.vocab_size), elem_width), Use::Weight) : 0;
  s.free(encoder), s.free(decoder), s.free(head);
}

// How many of the model's layers hold a tensor of `set`.
u64 layers_in(const ModelConfig& m, LayerSet set, std::uint8_t stage) {
  const u64 dense = std::min(m.dense_layers, m.num_layers);
  switch (set) {
    case LayerSet::Dense: return dense;
    case LayerSet::Moe: return m.num_layers - dense;
    case LayerSet::Encoder: return m.enc.encoder_layers;
    case LayerSet::Decoder: return m.num_layers;
    case LayerSet::Stage: return stage < m.enc.stage_depths.size() ? m.enc.stage_depths[stage] : 0;
    case LayerSet::Attention: return mixer_layers(m, Mixer::Attention);
    case LayerSet::ShortConv: return mixer_layers(m, Mixer::ShortConv);
    case LayerSet::Mamba: return mixer_layers(m, Mixer::Mamba);
    case LayerSet::Recurrent: return mixer_layers(m, Mixer::Recurrent);
    case LayerSet::All: break;
  }
  return m.num_layers;
}

u64 holding_layers(const ModelConfig& m, const WeightTensor& t) {
  // Swin's layers differ by stage: a tensor outside the stages' blocks (patch merging) is the model's.
  if (m.family == Family::Swin && t.layers != LayerSet::Stage) return 0;
  const u64 L = layers_in(m, t.layers, t.stage);
  return L > 0 && t.count >= L && t.count % L == 0 ? L : 0;
}

bool head_tensor(const WeightTensor& t) { return t.name == "lm_head" || t.name == "norm" || t.name == "lm_head.bias"; }

namespace {

// Whether a layer of `kind` holds a tensor of `set` (a hybrid's: All, Dense / Moe, its mixer's).
bool holds(LayerSet set, LayerKind kind) {
  switch (set) {
    case LayerSet::Dense: return !kind.moe;
    case LayerSet::Moe: return kind.moe;
    case LayerSet::Attention: return has_mixer(kind.mixer, Mixer::Attention);
    case LayerSet::ShortConv: return has_mixer(kind.mixer, Mixer::ShortConv);
    case LayerSet::Mamba: return has_mixer(kind.mixer, Mixer::Mamba);
    case LayerSet::Recurrent: return has_mixer(kind.mixer, Mixer::Recurrent);
    default: return true;
  }
}

}  // namespace

// Adds a per-layer tensor (`per_layer` of them in each layer; stacked experts: one) to `l`.
void add_to_layer(LayerWeights& l, const WeightTensor& w, u64 bytes, u64 per_layer, bool cast) {
  const u64 tensors = w.name.rfind("experts.", 0) == 0 ? 1 : per_layer, copy = mul(mul(mul(w.rows, w.cols), per_layer), 2);
  for (u64 i = 0; i < tensors; ++i) l.tensors.push_back(mul(bytes, per_layer / tensors)), l.via_cast.push_back(cast);
  if (cast) l.casts.push_back(copy);
  if (cast && !w.lora_target) l.unlinked_casts.push_back(copy);
}

WeightTensors weight_tensors(const Run& r, u64 elem_width, bool gradients) {
  WeightTensors t;
  const Quantization q = effective_quant(r.m, r.o);
  for (const auto& w : describe_weights(r.m)) {
    if (gradients && !gets_gradient(w, r.o.grad_checkpointing)) continue;  // never reached by the backward: .grad stays None
    const u64 each = mul(w.rows, w.cols), L = holding_layers(r.m, w);
    const bool quantized = w.stored_bytes > 0 || (q.method != QuantMethod::None && w.quantizable);
    if (w.name == "lm_head" && r.w.amp) t.lm_head_cast = mul(each, 2);
    if (w.tied) continue;
    u64 bytes = quantized ? (w.stored_bytes > 0 ? w.stored_bytes : quantized_bytes(q, w.rows, w.cols)) : mul(each, elem_width);
    if (L > 0) {  // per layer: count / L tensors
      const bool cast = w.matmul && r.w.amp && !quantized;
      if (!r.m.layer_mixer.empty()) {  // a hybrid: each (mixer, experts) pair's layer
        t.mixers.resize(2 * (static_cast<std::size_t>(Mixer::Parallel) + 1));  // each mixer x {dense, MoE}
        for (std::size_t slot = 0; slot < t.mixers.size(); ++slot) {
          LayerKind kind{};
          kind.mixer = static_cast<Mixer>(slot / 2), kind.moe = slot % 2 == 1;
          if (holds(w.layers, kind)) add_to_layer(t.mixers[slot], w, bytes, w.count / L, cast);
        }
      } else if (w.layers == LayerSet::Stage) {
        if (t.stages.size() <= w.stage) t.stages.resize(w.stage + 1U);
        add_to_layer(t.stages[w.stage], w, bytes, w.count / L, cast);
      } else if (w.layers == LayerSet::Decoder) {
        add_to_layer(t.cross, w, bytes, w.count / L, cast);
      } else {
        if (w.layers != LayerSet::Moe) add_to_layer(t.dense, w, bytes, w.count / L, cast);
        if (w.layers == LayerSet::All || w.layers == LayerSet::Moe) add_to_layer(t.moe, w, bytes, w.count / L, cast);
      }
    } else if (head_tensor(w)) {
      if (w.name == "lm_head") t.lm_head_at = t.head.size();
      t.head.push_back(mul(bytes, w.count));
    } else {
      t.embed.push_back(mul(bytes, w.count));
    }
  }
  return t;
}

void allocate_weights(Sequence& s, const Run& r) {
  const WeightTensors t = weight_tensors(r, r.w.weight);
  for (u64 b : t.embed) s.alloc(b, Use::Weight);
  const u64 tp = std::max<u64>(r.o.tensor_parallel, 1);  // a tensor-parallel rank's share of each layer
  for (LayerKind kind : layer_order(r.m)) {
    for (u64 b : t.layer(kind).tensors) s.alloc(b / tp, Use::Weight);
  }
  for (u64 b : t.head) s.alloc(b, Use::Weight);
  release_tied_head(s, r, r.w.weight);
}

}  // namespace vramdoc::estimator::detail
