// The estimate: which tensors are alive at each phase of a step, and what the caching allocator
// and the CUDA driver add on top. Pure arithmetic on a ModelConfig; never prints.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/estimator/model_config.hpp"
#include "core/estimator/parallel_options.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

enum class Mode { Train, Lora, Qlora, Infer };
// Inference with weights quantised on load (bitsandbytes int8 / nf4, fp8 with torch.float8_e4m3fn).
enum class Quant { None, Int8, Int4, Fp8 };
enum class Precision { Fp32, AmpBf16, AmpFp16, Bf16, Fp16 };
enum class Optimizer { AdamW, Adam, Sgd, SgdMomentum, AdamW8bit, Adafactor };
enum class Attention { Sdpa, Eager, Flash };

// The most decoder-layer passes one estimate simulates, op by op: the layers, and in inference the
// layers again for each generated token (--new-tokens 16777216 took 9.2 GB). About a microsecond
// of work per op; docs/estimator.md, "Limits".
inline constexpr std::uint64_t kMaxLayerPasses = 1ULL << 19;

struct Options {
  Mode mode = Mode::Train;
  Task task = Task::CausalLm;     // --task; a model's own default when not given (see default_task)
  std::uint64_t image_size = 0;   // --image-size: pixels per side (0: the config's image_size)
  std::uint64_t target_seq = 0;   // --target-seq: decoder tokens of an encoder-decoder (0: 128)
  Precision precision = Precision::Bf16;
  Optimizer optimizer = Optimizer::AdamW;
  Attention attention = Attention::Sdpa;
  bool attention_given = false;   // --attention was given: it wins over a stand-in's eager default (attention_of)
  std::uint64_t batch = 1;  // per GPU (micro-batch)
  std::uint64_t seq = 1024;
  bool grad_checkpointing = false;
  std::uint64_t lora_rank = 16;
  std::vector<std::string> lora_targets;  // empty: PEFT's default for the family
  std::optional<std::uint64_t> kv_bytes_per_element;  // --kv-dtype; default: the activation dtype
  bool logits_last_only = false;  // --logits last: lm_head on the last position only
  std::uint64_t gpus = 1;         // all GPUs of the job: data-parallel ranks x tensor_parallel
  int zero_stage = 0;             // DeepSpeed ZeRO stage 0-3 (0: DDP or FSDP, see parallel.data)
  std::uint64_t tensor_parallel = 1;
  ParallelOptions parallel;       // wrapper, buckets, sharding, NCCL (parallel_options.hpp)
  std::uint64_t new_tokens = 0;   // inference: tokens generated after the prefill (model.generate)
  Quant quant = Quant::None;      // --quant: quantise a 16-bit checkpoint's Linears on load
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
};

// The attention the step runs: --attention when given, else eager for a stand-in of an unknown encoder or
// encoder-decoder (ModelConfig::EncoderTraits::eager_by_default), else o.attention (SDPA).
Attention attention_of(const ModelConfig& m, const Options& o);

struct Term {
  std::string key;   // JSON name, e.g. "activations_bytes"
  std::string label;  // for people, e.g. "activations kept for backward"
  std::uint64_t bytes = 0;
  std::string sharding = {};  // on several GPUs: how the term is split ("1/8 (FSDP2)", "on every rank"), else ""
};

struct Phase {
  std::string name;  // e.g. "backward start (loss gradient)"
  std::vector<Term> terms;
  std::uint64_t allocated_bytes = 0;  // sum of terms
  std::uint64_t cached_bytes = 0;     // free segments of earlier phases this phase cannot reuse
};

struct Estimate {
  std::uint64_t n_params = 0;
  std::uint64_t n_trainable = 0;
  std::vector<Phase> phases;
  std::size_t peak_phase = 0;               // index into phases
  std::uint64_t workspace_bytes = 0;        // cuBLAS / cuBLASLt workspaces (allocated via PyTorch)
  std::uint64_t peak_allocated_bytes = 0;   // max_memory_allocated() of a fresh process
  std::uint64_t peak_reserved_bytes = 0;    // max_memory_reserved()
  std::uint64_t cached_bytes = 0;           // reserved but free at the peak (the allocator replay's cache)
  std::uint64_t outside_allocator_bytes = 0;  // device memory PyTorch's allocator never sees (paged 8-bit optimizer state)
  std::uint64_t context_bytes = 0;          // CUDA context, kernels, library handles
  std::uint64_t nccl_bytes = 0;             // NCCL's communicators (several GPUs only), outside PyTorch's pool
  std::uint64_t process_bytes = 0;          // what nvidia-smi / NVML charge the process
  std::uint64_t checkpointing_saves_bytes = 0;  // peak drop from --grad-checkpointing (train/lora)
  // DDP: what a rank may need beyond the peak when its old gradient buckets outlive the rebuild
  // (a race with NCCL's watchdog; 0 without DDP).
  std::uint64_t ddp_rebuild_risk_bytes = 0;
  std::uint64_t uncertainty_percent = 0;  // the family's measured error beyond the fit margin (family_uncertainty_percent)
  std::vector<std::string> warnings;
};

// Estimates one configuration. Errors: a zero or absurd size, or a total beyond 2^64 bytes.
Result<Estimate> estimate(const ModelConfig& model, const Options& options);

// Bytes a quantised Linear of `in` x `out` features takes as stored (packed weight plus scales,
// zero points or absmax), for each quantization_config format.
std::uint64_t quantized_linear_bytes(const Quantization& q, std::uint64_t in, std::uint64_t out);

// Name <-> enum for the command line and JSON ("amp-bf16", "adamw-8bit", ...). Errors list the choices.
Result<Mode> parse_mode(std::string_view text);
Result<Precision> parse_precision(std::string_view text);
Result<Optimizer> parse_optimizer(std::string_view text);
Result<Attention> parse_attention(std::string_view text);
Result<std::uint64_t> parse_kv_dtype(std::string_view text);  // bytes per element: fp32, bf16, fp16, fp8, int8
Result<Quant> parse_quant(std::string_view text);              // none, int8, int4, fp8
Result<Task> parse_task(std::string_view text);                // causal-lm, seq-cls, token-cls, mlm, ...
std::string_view to_string(Task task);
// The task a model runs unless --task says otherwise: causal-lm for decoders, seq2seq for T5 / BART,
// speech-seq2seq for Whisper, image-cls for vision models, mlm for encoders.
Task default_task(const ModelConfig& model);
// Whether the model can run `task` (an error names the tasks it can).
Result<bool> check_task(const ModelConfig& model, Task task);
std::string_view to_string(Mode mode);
std::string_view to_string(Precision precision);
std::string_view to_string(Optimizer optimizer);
std::string_view to_string(Attention attention);
std::string_view to_string(Quant quant);

}  // namespace vramdoc::estimator
