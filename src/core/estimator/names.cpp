// Command-line and JSON names of the estimator's enums.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/estimator/estimate.hpp"

namespace vramdoc::estimator {

namespace {

template <class E, std::size_t N>
Result<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view text,
                 std::string_view what) {
  std::string choices;
  for (const auto& [name, value] : table) {
    if (name == text) return value;
    choices += (choices.empty() ? "" : ", ") + std::string(name);
  }
  return make_error("unknown " + std::string(what) + " '" + std::string(text) + "' (choose " + choices + ")");
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& table, E value) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

constexpr std::array<std::pair<std::string_view, Mode>, 4> kModes = {{
    {"train", Mode::Train}, {"lora", Mode::Lora}, {"qlora", Mode::Qlora}, {"infer", Mode::Infer}}};
constexpr std::array<std::pair<std::string_view, Quant>, 4> kQuants = {{
    {"none", Quant::None}, {"int8", Quant::Int8}, {"int4", Quant::Int4}, {"fp8", Quant::Fp8}}};
constexpr std::array<std::pair<std::string_view, Precision>, 5> kPrecisions = {{
    {"fp32", Precision::Fp32}, {"amp-bf16", Precision::AmpBf16}, {"amp-fp16", Precision::AmpFp16},
    {"bf16", Precision::Bf16}, {"fp16", Precision::Fp16}}};
constexpr std::array<std::pair<std::string_view, Optimizer>, 6> kOptimizers = {{
    {"adamw", Optimizer::AdamW}, {"adam", Optimizer::Adam}, {"sgd", Optimizer::Sgd},
    {"sgd-momentum", Optimizer::SgdMomentum}, {"adamw-8bit", Optimizer::AdamW8bit},
    {"adafactor", Optimizer::Adafactor}}};
constexpr std::array<std::pair<std::string_view, Attention>, 3> kAttentions = {{
    {"sdpa", Attention::Sdpa}, {"eager", Attention::Eager}, {"flash", Attention::Flash}}};
constexpr std::array<std::pair<std::string_view, Task>, 7> kTasks = {{
    {"causal-lm", Task::CausalLm}, {"seq-cls", Task::SeqCls}, {"token-cls", Task::TokenCls}, {"mlm", Task::Mlm},
    {"seq2seq", Task::Seq2Seq}, {"image-cls", Task::ImageCls}, {"speech-seq2seq", Task::SpeechSeq2Seq}}};
constexpr std::array<std::pair<std::string_view, std::uint64_t>, 7> kKvDtypes = {{
    {"fp32", 4}, {"bf16", 2}, {"fp16", 2}, {"fp8", 1}, {"int8", 1}, {"float32", 4}, {"float16", 2}}};

// The calibration files write "amp_bf16"; accept both spellings.
std::string dashed(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = c == '_' ? '-' : c;
  return s;
}

}  // namespace

Result<Mode> parse_mode(std::string_view text) { return lookup(kModes, text, "mode"); }
Result<Precision> parse_precision(std::string_view text) { return lookup(kPrecisions, dashed(text), "precision"); }
Result<Optimizer> parse_optimizer(std::string_view text) { return lookup(kOptimizers, dashed(text), "optimizer"); }
Result<Attention> parse_attention(std::string_view text) { return lookup(kAttentions, text, "attention"); }
Result<std::uint64_t> parse_kv_dtype(std::string_view text) { return lookup(kKvDtypes, text, "KV cache dtype"); }
std::string_view to_string(Mode mode) { return name_of(kModes, mode); }
std::string_view to_string(Precision precision) { return name_of(kPrecisions, precision); }
std::string_view to_string(Optimizer optimizer) { return name_of(kOptimizers, optimizer); }
std::string_view to_string(Attention attention) { return name_of(kAttentions, attention); }
Result<Quant> parse_quant(std::string_view text) { return lookup(kQuants, text, "--quant"); }
std::string_view to_string(Quant quant) { return name_of(kQuants, quant); }
Result<Task> parse_task(std::string_view text) { return lookup(kTasks, text, "--task"); }
std::string_view to_string(Task task) { return name_of(kTasks, task); }

Task default_task(const ModelConfig& m) {
  switch (m.kind) {
    case ModelKind::Decoder: return Task::CausalLm;
    case ModelKind::Encoder: return Task::Mlm;
    case ModelKind::Vision:
    case ModelKind::Cnn: return Task::ImageCls;
    case ModelKind::EncoderDecoder: return m.family == Family::Whisper ? Task::SpeechSeq2Seq : Task::Seq2Seq;
  }
  return Task::CausalLm;
}

Result<bool> check_task(const ModelConfig& m, Task task) {
  std::vector<Task> can;
  switch (m.kind) {
    case ModelKind::Decoder: can = {Task::CausalLm}; break;
    case ModelKind::Encoder: can = {Task::SeqCls, Task::TokenCls, Task::Mlm}; break;
    case ModelKind::Vision:
    case ModelKind::Cnn: can = {Task::ImageCls}; break;
    case ModelKind::EncoderDecoder: can = {default_task(m)}; break;
  }
  if (m.enc.hash_functions > 0 && task == Task::Mlm) {  // modeling_canine.py: no CanineForMaskedLM ("TODO add support for MLM")
    return make_error("--task mlm does not fit this CANINE model: transformers has no masked-LM head for it (it can run: "
                      "seq-cls, token-cls)");
  }
  std::string names;
  for (Task t : can) {
    if (t == task) return true;
    names += (names.empty() ? "" : ", ") + std::string(to_string(t));
  }
  return make_error("--task " + std::string(to_string(task)) + " does not fit this " + std::string(family_name(m.family)) +
                    " model (it can run: " + names + ")");
}

}  // namespace vramdoc::estimator
