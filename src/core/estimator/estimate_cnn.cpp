// The estimate of a convolutional classifier's step: the op-by-op sequence (forward_cnn.cpp) gives each
// stage's live bytes (the phases) and, replayed through the caching-allocator model, the reserved memory;
// the driver's overhead is the script capture's, which counts cuDNN's kernels (capture/report.hpp).
#include <algorithm>
#include <limits>

#include "core/capture/report.hpp"
#include "core/estimator/allocator.hpp"
#include "core/estimator/cnn.hpp"
#include "core/estimator/cnn_step.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
using detail::Stage;
using detail::StagePeak;
using detail::Use;

// Not measured on a GPU yet (docs/estimator.md, "Round 4"): fits and --max-batch keep this much more margin.
constexpr u64 kCnnUncertaintyPercent = 15;

Phase phase(std::string name, const StagePeak& p, const char* key, const char* label) {
  Phase out{std::move(name), {}, 0};
  const std::vector<Term> terms = {{"weights_bytes", "weights and BatchNorm buffers", p.of(Use::Weight)},
                                   {"gradients_bytes", "gradients", p.of(Use::Gradient)},
                                   {"optimizer_state_bytes", "optimizer state", p.of(Use::State)},
                                   {"autocast_weight_copies_bytes", "autocast 16-bit weight copies", p.of(Use::Cast)},
                                   {"logits_loss_bytes", "logits, loss and its gradients", p.of(Use::Logits)},
                                   {key, label, p.of(Use::Activation)},
                                   {"workspaces_bytes", "cuBLAS and cuDNN workspaces", p.of(Use::Workspace)}};
  for (const Term& t : terms) {
    if (t.bytes == 0) continue;
    out.allocated_bytes = saturating_add(out.allocated_bytes, t.bytes);
    out.terms.push_back(t);
  }
  return out;
}

Result<bool> check_cnn_options(const ModelConfig& m, const Options& o) {
  const std::string name(cnn_arch_name(m.cnn.arch));
  if (o.batch == 0) return make_error("batch must be positive");
  if (o.task != Task::ImageCls) return make_error("--task " + std::string(to_string(o.task)) + " does not fit this " + name + " model (it can run: image-cls)");
  if (o.mode == Mode::Lora || o.mode == Mode::Qlora) {
    return make_error("--mode " + std::string(to_string(o.mode)) + ": PEFT has no default LoRA targets for a " + name +
                      " (a convolutional classifier); estimate --mode train or --mode infer");
  }
  if (o.quant != Quant::None) return make_error("--quant is for transformers' Linears; a " + name + " is estimated unquantised");
  if (o.gpus > 1 || o.tensor_parallel > 1 || o.zero_stage > 0) {
    return make_error("convolutional classifiers are estimated on one GPU (--gpus 1, no --tp or --zero)");
  }
  if (o.new_tokens > 0) return make_error("--new-tokens is for text generation; a " + name + " classifies images");
  return true;
}

}  // namespace

Result<Estimate> estimate_cnn(const ModelConfig& m, const Options& given) {
  Options o = given;
  if (o.task == Task::CausalLm) o.task = Task::ImageCls;
  if (auto ok = check_cnn_options(m, o); !ok) return make_error(ok.error());
  const u64 image = o.image_size > 0 ? o.image_size : m.cnn.image_size;
  if (image > (1ULL << 16)) return make_error("--image-size " + std::to_string(image) + " is absurdly large (at most 65536 pixels per side)");
  const bool trains = o.mode == Mode::Train;
  CnnParts parts = m.cnn;
  parts.sr_fused = parts.attention_interface && o.attention != Attention::Eager;  // SegformerAttention under SDPA / flash
  auto graph = build_cnn_graph(parts, image, trains);
  if (!graph) return make_error(graph.error());
  detail::CnnRun run;
  run.batch = o.batch, run.trains = trains, run.optimizer = o.optimizer;
  run.amp = o.precision == Precision::AmpBf16 || o.precision == Precision::AmpFp16;
  run.compute_bytes = o.precision == Precision::Fp32 ? 4 : 2;
  run.param_bytes = o.precision == Precision::Fp32 || run.amp ? 4 : 2;
  detail::Sequence seq;
  detail::cnn_events(seq, *graph, run);

  Estimate e;
  e.warnings = m.warnings;
  e.uncertainty_percent = m.stand_in ? 30 : kCnnUncertaintyPercent;
  if (!m.stand_in) {
    e.warnings.push_back(std::string(cnn_arch_name(m.cnn.arch)) + " from its config: modelled op by op from transformers' code, not yet "
                         "measured on a GPU (+-" + std::to_string(kCnnUncertaintyPercent) + " %); 'fits' and --max-batch keep that much more margin");
  }
  if (o.grad_checkpointing) e.warnings.push_back("--grad-checkpointing is not modelled for convolutional classifiers: estimated without it");
  e.n_params = graph->params;
  e.n_trainable = trains ? graph->params : 0;
  if (trains) {
    e.phases = {phase("backward start (loss gradient)", seq.peak(Stage::Loss), "activations_bytes", "activations kept for backward"),
                phase("backward (the layers' gradients)", seq.peak(Stage::Backward), "activations_bytes", "activations and their gradients"),
                phase("forward (activations kept for backward)", seq.peak(Stage::Forward), "activations_bytes", "activations kept for backward"),
                phase("optimizer step", seq.peak(Stage::Optimizer), "optimizer_temporaries_bytes", "optimizer step temporaries")};
  } else {
    e.phases = {phase("forward: classifier", seq.peak(Stage::Head), "logits_loss_bytes", "logits (and the classifier's input)"),
                phase("forward: the layers", seq.peak(Stage::Layers), "layer_transient_bytes", "feature maps and cuDNN workspaces")};
  }
  for (std::size_t i = 1; i < e.phases.size(); ++i) {
    if (e.phases[i].allocated_bytes > e.phases[e.peak_phase].allocated_bytes) e.peak_phase = i;
  }
  // the workspaces are the phases' own term here (cuDNN's change with each convolution's shape)
  e.peak_allocated_bytes = e.phases[e.peak_phase].allocated_bytes;
  const std::size_t setup = seq.setup_events();
  const ReplayResult replayed = replay(seq.take(), AllocatorSettings{o.expandable_segments, std::numeric_limits<u64>::max()}, setup);
  e.peak_allocated_bytes = std::max(e.peak_allocated_bytes, replayed.peak_allocated_bytes);
  if (e.peak_allocated_bytes >= std::numeric_limits<u64>::max() / 4) {
    return make_error("the estimate exceeds 2^62 bytes: batch x image size is absurdly large");
  }
  e.peak_reserved_bytes = std::max(replayed.peak_reserved_bytes, e.peak_allocated_bytes);
  e.cached_bytes = e.peak_reserved_bytes - e.peak_allocated_bytes;
  capture::Libraries used;
  used.cublas = used.cudnn = true, used.trains = trains, used.cublas_handles = trains ? 2 : 1;
  e.context_bytes = capture::process_overhead_bytes(used);
  e.process_bytes = saturating_add(e.peak_reserved_bytes, e.context_bytes);
  return e;
}

}  // namespace vramdoc::estimator
