// A speech encoder (wav2vec2, HuBERT, WavLM: an unknown model type with conv_dim): the transformer encoder over
// --seq frames as the generic encoder estimates it, plus its convolutional feature extractor over the frames'
// samples (--seq x the product of conv_stride) run op by op (cnn_graph.cpp's build_audio_features, forward_cnn.cpp).
// Training: what the extractor keeps for its backward is alive through the encoder's whole step, with the
// extractor's weights, gradients and optimizer state. Inference: the extractor runs first, alone with the weights.
#include <algorithm>

#include "core/estimator/allocator.hpp"
#include "core/estimator/cnn.hpp"
#include "core/estimator/cnn_step.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;

u64 term_of(const Phase& p, const char* key) {
  for (const Term& t : p.terms) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

}  // namespace

Result<Estimate> estimate_speech(const ModelConfig& m, const Options& o) {
  ModelConfig encoder = m;
  encoder.cnn.audio = false;
  auto e = estimate(encoder, o);
  if (!e) return e;
  u64 stride = 1;
  for (u64 s : m.cnn.conv_stride) stride = saturating_mul(stride, s);
  u64 receptive = 1;  // the first frame's samples: kernel spans through the strides
  u64 step = 1;
  for (std::size_t i = 0; i < m.cnn.conv_kernel.size(); ++i) {
    receptive = saturating_add(receptive, saturating_mul(m.cnn.conv_kernel[i] - 1, step));
    step = saturating_mul(step, m.cnn.conv_stride[i]);
  }
  const u64 samples = saturating_add(saturating_mul(o.seq > 0 ? o.seq - 1 : 0, stride), receptive);
  const bool trains = o.mode != Mode::Infer;
  auto graph = build_audio_features(m.cnn, samples, trains);
  if (!graph) return make_error(graph.error());
  detail::CnnRun run;
  run.batch = o.batch, run.trains = trains, run.optimizer = o.optimizer, run.steps = 1;
  run.amp = o.precision == Precision::AmpBf16 || o.precision == Precision::AmpFp16;
  run.compute_bytes = o.precision == Precision::Fp32 ? 4 : 2;
  run.param_bytes = o.precision == Precision::Fp32 || run.amp ? 4 : 2;
  detail::Sequence seq;
  detail::cnn_events(seq, *graph, run);
  Phase& peak = e->phases[e->peak_phase];
  const bool full = o.mode == Mode::Train;  // LoRA: the extractor is frozen (no gradients, no state)
  const u64 states = o.optimizer == Optimizer::Sgd ? 0 : o.optimizer == Optimizer::SgdMomentum ? 1 : 2;
  const u64 weights = saturating_mul(graph->params, run.param_bytes);
  u64 extra = weights;
  if (trains) {
    // the encoder's peak with what the extractor keeps, or the extractor's own forward or backward peak beside the
    // encoder's weights, gradients and state (its activations not yet made, or already freed)
    const auto own = [&](detail::Stage stage) {
      const detail::StagePeak& p = seq.peak(stage);
      return saturating_add(p.of(detail::Use::Activation), p.of(detail::Use::Workspace));
    };
    const u64 kept = seq.peak(detail::Stage::Loss).of(detail::Use::Activation);
    u64 fixed = e->workspace_bytes;
    for (const char* key : {"weights_bytes", "gradients_bytes", "optimizer_state_bytes", "autocast_weight_copies_bytes"}) {
      fixed = saturating_add(fixed, term_of(peak, key));
    }
    const u64 alone = saturating_add(fixed, std::max(own(detail::Stage::Forward), own(detail::Stage::Backward)));
    const u64 with_encoder = saturating_add(e->peak_allocated_bytes, kept);
    const u64 maps = std::max(with_encoder, alone) - e->peak_allocated_bytes;
    extra = saturating_add(extra, saturating_add(maps, full ? saturating_mul(weights, 1 + states) : 0));
  } else {  // the extractor's own peak, before the encoder's activations exist
    const detail::StagePeak& p = seq.peak(detail::Stage::Layers);
    const u64 extractor = saturating_add(p.of(detail::Use::Activation), p.of(detail::Use::Workspace));
    const u64 encoder_activations = saturating_add(term_of(peak, "layer_transient_bytes"), term_of(peak, "logits_loss_bytes"));
    extra = saturating_add(extra, extractor > encoder_activations ? extractor - encoder_activations : 0);
  }
  peak.terms.push_back({"feature_extractor_bytes", "the convolutional feature extractor (feature maps, weights)", extra});
  peak.allocated_bytes = saturating_add(peak.allocated_bytes, extra);
  e->n_params = saturating_add(e->n_params, graph->params);
  if (full) e->n_trainable = saturating_add(e->n_trainable, graph->params);
  e->peak_allocated_bytes = saturating_add(e->peak_allocated_bytes, extra);
  const u64 segments = saturating_mul((saturating_add(extra, 2 * MiB - 1)) / (2 * MiB), 2 * MiB);
  e->peak_reserved_bytes = saturating_add(e->peak_reserved_bytes, segments);
  e->process_bytes = saturating_add(e->process_bytes, segments);
  return e;
}

}  // namespace vramdoc::estimator
