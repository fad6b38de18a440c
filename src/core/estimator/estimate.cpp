// The estimate: the phases' live bytes (phases.cpp), the caching allocator's reserved memory from
// replaying the step's allocation sequence (step_sequence.cpp, allocator.cpp), and the driver's
// per-process overhead (calibration.hpp).
#include "core/estimator/estimate.hpp"

#include <algorithm>
#include <limits>

#include "core/estimator/calibration.hpp"
#include "core/estimator/cnn.hpp"
#include "core/estimator/encoders.hpp"
#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/nccl.hpp"
#include "core/estimator/parallel.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using detail::u64;
constexpr u64 kSaturated = std::numeric_limits<u64>::max();

std::size_t peak_of(const std::vector<Phase>& phases) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < phases.size(); ++i) {
    if (phases[i].allocated_bytes > phases[best].allocated_bytes) best = i;
  }
  return best;
}

std::vector<Phase> phases_for(const detail::Run& r, bool checkpointing) {
  return detail::trains(r.o) ? detail::training_phases(r, checkpointing) : detail::inference_phases(r);
}

Result<bool> check_options(const ModelConfig& model, const Options& o) {
  if (o.batch == 0 || o.seq == 0) return make_error("batch and sequence length must be positive");
  if (o.gpus == 0 || o.tensor_parallel == 0) return make_error("--gpus and --tp must be positive");
  if (detail::adapters(o) && o.lora_rank == 0) return make_error("--lora-rank must be positive");
  if (auto error = parallel_error(model, o)) return make_error(*error);
  if (o.quant != Quant::None && o.mode != Mode::Infer) {
    return make_error("--quant is for inference (--mode infer); for training on a 4-bit base use --mode qlora");
  }
  if (o.new_tokens > 0 && o.mode != Mode::Infer) return make_error("--new-tokens is for inference (--mode infer)");
  if (model.num_layers > kMaxLayers)
    return make_error("the model has " + std::to_string(model.num_layers) + " layers: vramdoc estimates at most " + std::to_string(kMaxLayers));
  // The work: every layer once, and once more per generated token (inference_events).
  const std::uint64_t layers = std::max<std::uint64_t>(model.num_layers, 1);
  if (saturating_mul(layers, saturating_add(o.new_tokens, 1)) > kMaxLayerPasses) {
    return make_error("--new-tokens " + std::to_string(o.new_tokens) + " with " + std::to_string(layers) +
                      " layers is more decoding than vramdoc simulates (each token runs every layer op by op; at most " +
                      std::to_string(kMaxLayerPasses) + " layer passes): at most " + std::to_string(kMaxLayerPasses / layers - 1) +
                      " new tokens for this model (docs/estimator.md, \"Limits\")");
  }
  return true;
}

// DDP rebuilds its buckets at the second forward; the old ones are freed when NCCL's watchdog
// thread drops the last all-reduce's work objects, on its own schedule. Fresh two-GPU jobs still
// held them at the step's peak in 10 of 58 ranks (3 of the 4 with static_graph, whose first step
// reduces every bucket at the end of the backward): the peak assumes them freed, this says by how
// much a rank can exceed it (docs/estimator.md, "DDP's bucket rebuild").
void warn_ddp_rebuild(const Options& o, Estimate& e) {
  if (!detail::trains(o) || data_parallel_degree(o) == 1 || wrapper(o) != DataParallel::Ddp) return;
  for (const Term& t : e.phases[e.peak_phase].terms) {
    if (t.key != "ddp_buckets_bytes") continue;
    e.ddp_rebuild_risk_bytes = t.bytes;
    e.warnings.push_back("DDP rebuilds its gradient buckets at the second step; a rank whose old buckets are still held "
                         "at the peak (a race with NCCL's watchdog: 10 of 58 measured ranks, 3 of 4 with static_graph) "
                         "needs up to " + format_bytes(t.bytes, 2) + " more than this peak");
  }
}

void add_warnings(const ModelConfig& model, const Options& o, Estimate& e) {
  if (o.attention == Attention::Flash && o.precision == Precision::Fp32) {
    e.warnings.push_back("flash attention needs 16-bit inputs: fp32 runs SDPA's other kernels");
  }
  if (detail::trains(o) && detail::attention_path(model, o) == AttentionPath::Math) {
    e.warnings.push_back("fp32 SDPA with grouped KV heads falls back to the math kernel, which keeps "
                         "seq x seq fp32 probabilities per layer: use amp-bf16 or bf16");
  }
  if (model.attn_logit_softcap > 0 && o.attention != Attention::Eager) {
    e.warnings.push_back("this model soft-caps attention scores, which only eager attention applies "
                         "(transformers recommends --attention eager for training it)");
  }
}

// Reserved memory: the step's allocation sequence replayed through the caching-allocator model;
// on several GPUs one rank's, per CUDA stream (DDP, FSDP, TP training). ZeRO, LoRA and offload
// on several GPUs are not replayed: the fitted ratio of the single-GPU calibration stands in.
// On several GPUs the rank's op-by-op replay also sees temporaries between the phases' points (an
// FSDP gather's 16-bit shard copy, a reduce's input, a recomputed layer beside the optimizer's
// state): where its allocated peak is higher, the difference is a term of the peak phase.
void replayed_peak(const detail::Run& r, const ReplayResult& replayed, Estimate& e) {
  if (replayed.peak_allocated_bytes < saturating_add(e.peak_allocated_bytes, MiB)) return;  // below a MiB: rounding
  const u64 more = replayed.peak_allocated_bytes - e.peak_allocated_bytes;
  Phase& peak = e.phases[e.peak_phase];
  peak.terms.push_back({"rank_replay_extra_bytes", "transient tensors the rank's op-by-op replay holds at its peak", more,
                        r.o.gpus > 1 || r.o.tensor_parallel > 1 ? "on this rank" : ""});
  peak.allocated_bytes = saturating_add(peak.allocated_bytes, more);
  e.peak_allocated_bytes = replayed.peak_allocated_bytes;
}

u64 reserved_bytes(const detail::Run& r, Estimate& e) {
  // DDP over LoRA / QLoRA adapters: each rank runs the one-GPU step; DDP adds one flat bucket
  // tensor of the adapters' gradients (its own segment, allocated at construction).
  const bool ddp_adapters = detail::adapters(r.o) && wrapper(r.o) == DataParallel::Ddp && r.o.tensor_parallel == 1 &&
                            r.o.parallel.offload == Offload::None;
  if ((r.o.gpus > 1 && !ddp_adapters) || r.o.zero_stage > 0 || r.o.tensor_parallel > 1) {
    return reserved_for(e.peak_allocated_bytes, 0);
  }
  // the peak allocated after the model is built (the measurements reset the peak there: a tied lm_head's
  // transient while building is no step's), the reserved of it all
  std::size_t setup = 0;
  const std::vector<AllocEvent> events = detail::step_events(r, &setup);
  const ReplayResult replayed = replay(events, AllocatorSettings{r.o.expandable_segments, kSaturated}, setup);
  // Encoders, encoder-decoders and vision models: their phases' terms are the decoder's formulas; the
  // op-by-op replay holds what their heads and embeddings really keep (BERT-style: within 3 % of the traces).
  if (r.m.kind != ModelKind::Decoder) replayed_peak(r, replayed, e);
  u64 buckets = 0;
  for (const Term& t : e.phases[e.peak_phase].terms) buckets += t.key == "ddp_buckets_bytes" ? segment_bytes(t.bytes) : 0;
  return std::max(saturating_add(replayed.peak_reserved_bytes, buckets), e.peak_allocated_bytes);
}

// A model built on the meta device and materialised with Module.to_empty (PyTorch's recipe for
// FSDP1's param_init_fn and for tensor parallelism) loses its tied lm_head: nn.Module._apply gives
// each module a new Parameter for a meta one, so lm_head trains with a weight of its own.
// Measured: the FSDP1 qwen2.5-0.5b ranks hold half the embedding more than FSDP2's (whose
// fully_shard keeps the one shared parameter), and tensor-parallel qwen2.5 ranks the whole
// lm_head more (weights, gradients and state).
bool meta_init_unties(const ModelConfig& m, const Options& o) {
  if (!m.tie_word_embeddings || !(o.gpus > 1 || o.tensor_parallel > 1)) return false;
  const bool fsdp = o.parallel.data == DataParallel::Fsdp && data_parallel_degree(o) > 1;
  if (fsdp) return o.parallel.fsdp_version == 1;
  return o.tensor_parallel > 1;
}

}  // namespace

// The options as the model runs them: the task (the model's own unless --task says otherwise), and
// for a model with an encoder the encoder's tokens as the sequence (patches, mel frames' positions).
Attention attention_of(const ModelConfig& m, const Options& o) {
  return !o.attention_given && m.enc.eager_by_default ? Attention::Eager : o.attention;
}

Options effective_options(const ModelConfig& m, const Options& given) {
  Options o = given;
  o.attention = attention_of(m, given);
  if (m.kind != ModelKind::Decoder && o.task == Task::CausalLm) o.task = default_task(m);
  if (m.kind != ModelKind::Decoder) o.seq = encoder_tokens(m, o.seq, o.image_size);
  if (m.kind == ModelKind::EncoderDecoder && o.target_seq == 0) o.target_seq = o.mode == Mode::Infer && o.new_tokens > 0 ? 1 : 128;
  return o;
}

Result<Estimate> estimate(const ModelConfig& given_model, const Options& given) {
  if (given_model.kind == ModelKind::Cnn) return estimate_cnn(given_model, given);  // op by op of its own (estimate_cnn.cpp)
  if (given_model.cnn.audio) return estimate_speech(given_model, given);  // + the feature extractor (estimate_speech.cpp)
  const bool encoder_task = given.task == Task::SeqCls || given.task == Task::TokenCls || given.task == Task::Mlm;
  if (given_model.kind == ModelKind::Decoder && given_model.family == Family::Generic && encoder_task) {
    return estimate(generic_encoder_of(given_model), given);  // an unknown encoder (ModernBERT): not refused
  }
  if (given.task == Task::ImageCls && given_model.kind != ModelKind::Vision) {  // a wrapper's vision tower (SigLIP)
    if (given_model.vision_tower) return estimate(*given_model.vision_tower, given);
    if (given_model.stand_in || given_model.family == Family::Generic) return estimate(generic_vision_of(given_model), given);
  }
  const Options o = effective_options(given_model, given);
  if (auto ok = check_task(given_model, o.task); !ok) return make_error(ok.error());
  ModelConfig tied_model = given_model;
  tied_model.task = o.task;
  // Funnel: FunnelModel's decoder layers run for every task but sequence classification (FunnelBaseModel)
  if (o.task != Task::SeqCls) tied_model.num_layers += tied_model.enc.upsampling_layers;
  // Only an MLM head or an encoder-decoder's lm_head shares the embeddings' weight; a classifier
  // head (sequence, token, image classification) has its own, and no tied lm_head is ever built.
  if (tied_model.kind != ModelKind::Decoder && o.task != Task::Mlm && tied_model.kind != ModelKind::EncoderDecoder) {
    tied_model.tie_word_embeddings = false;
  }
  ModelConfig model = tied_model;
  if (meta_init_unties(model, o)) model.tie_word_embeddings = false;
  if (auto ok = check_options(model, o); !ok) return make_error(ok.error());
  const std::vector<std::string> targets = o.lora_targets.empty() ? default_lora_targets(model) : o.lora_targets;
  const detail::Widths w = detail::widths_of(o);
  const detail::Run run{model, o, w, detail::count_params(model, o, targets, w), targets};
  if (detail::adapters(o) && run.s.adapter_params == 0) {
    return make_error("no Linear of this " + std::string(family_name(model.family)) + " model matches --lora-targets");
  }
  Estimate e;
  e.warnings = model.warnings;
  e.uncertainty_percent = family_uncertainty_percent(model);
  if (e.uncertainty_percent > 0 && model.family != Family::Generic && !model.stand_in) {
    e.warnings.push_back(std::string(family_name(model.family)) + ": measured less closely than the other families (+-" +
                         std::to_string(e.uncertainty_percent) + " %); 'fits' and --max-batch keep that much more margin");
  }
  add_warnings(model, o, e);
  if (meta_init_unties(tied_model, o)) {
    e.warnings.push_back(std::string(o.tensor_parallel > 1 ? "tensor parallelism" : "FSDP1") +
                         " on a meta-device model materialised with to_empty unties lm_head from the embeddings "
                         "(estimated untied); call model.tie_weights() after materialising to share them again");
  }
  e.n_params = run.s.params;
  e.n_trainable = o.mode == Mode::Train ? run.s.params : detail::adapters(o) ? run.s.adapter_params : 0;
  e.phases = phases_for(run, o.grad_checkpointing);
  e.peak_phase = peak_of(e.phases);
  e.workspace_bytes = detail::trains(o) ? kCublasWorkspaceBytes : kCublasInferenceWorkspaceBytes;
  e.peak_allocated_bytes = saturating_add(e.phases[e.peak_phase].allocated_bytes, e.workspace_bytes);
  if (e.peak_allocated_bytes >= kSaturated / 4) {
    return make_error("the estimate exceeds 2^62 bytes: batch x sequence is absurdly large");
  }
  if (detail::replays_rank(o)) {
    const ReplayResult replayed = detail::replay_rank(run);
    replayed_peak(run, replayed, e);
    e.peak_reserved_bytes = std::max(replayed.peak_reserved_bytes, e.peak_allocated_bytes);
  } else {
    e.peak_reserved_bytes = reserved_bytes(run, e);
  }
  e.cached_bytes = e.peak_reserved_bytes - e.peak_allocated_bytes;
  if (o.mode == Mode::Qlora && o.optimizer == Optimizer::AdamW8bit) {  // paged: cudaMallocManaged, not PyTorch's
    e.outside_allocator_bytes = saturating_add(saturating_mul(2, run.s.adapter_params), saturating_mul(8, run.s.adapter_params / 256 + 1));
  }
  const bool fused16 = o.attention != Attention::Eager && (w.act == 2) &&
                       detail::attention_path(model, o) == AttentionPath::Fused;
  e.context_bytes = process_overhead_bytes(detail::trains(o), fused16);
  const NcclGroups groups = nccl_communicators(o);
  e.nccl_bytes = nccl_device_bytes(groups.peers, groups.single, o.parallel.nccl_buffsize);
  e.process_bytes = saturating_add(saturating_add(e.peak_reserved_bytes, e.context_bytes),
                                   saturating_add(e.outside_allocator_bytes, e.nccl_bytes));
  warn_ddp_rebuild(o, e);
  if (detail::trains(o) && !o.grad_checkpointing) {
    const auto with = phases_for(run, true);
    const u64 peak_with = with[peak_of(with)].allocated_bytes;
    const u64 peak_without = e.phases[e.peak_phase].allocated_bytes;
    e.checkpointing_saves_bytes = peak_without > peak_with ? peak_without - peak_with : 0;
  }
  return e;
}

}  // namespace vramdoc::estimator
