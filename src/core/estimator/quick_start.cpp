#include "core/estimator/quick_start.hpp"

#include <vector>

#include "core/estimator/architecture.hpp"
#include "core/estimator/cards.hpp"
#include "core/estimator/estimate.hpp"
#include "core/estimator/fit.hpp"
#include "core/estimator/presets.hpp"
#include "core/table.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

struct Row {
  std::string label;
  Options options;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Result<std::string> render_quick_start(const std::string& name, const Style& style) {
  auto model = preset_config(name);
  if (!model) return make_error(model.error());
  Options amp;  // batch 1 x seq 1024, AdamW, no checkpointing: Options' defaults
  amp.precision = Precision::AmpBf16;
  Options bf16 = amp;
  bf16.precision = Precision::Bf16;
  Options lora = bf16;
  lora.mode = Mode::Lora;
  Options infer = bf16;
  infer.mode = Mode::Infer;
  const std::string targets = joined(default_lora_targets(*model));
  const std::vector<Row> rows = {{"full fine-tune, AdamW, amp bf16 (HF bf16=True)", amp},
                                 {"full fine-tune, AdamW, bf16 weights", bf16},
                                 {"LoRA r=" + std::to_string(lora.lora_rank) + " on " + targets + ", bf16 base", lora},
                                 {"inference, bf16", infer}};
  std::vector<GpuCard> cards;
  for (const char* c : {"RTX 3060 12GB", "RTX 4090", "A100 80GB SXM"}) {
    auto card = find_gpu(c);
    if (!card) return make_error(card.error());
    cards.push_back(*card);
  }
  std::vector<std::string> headers = {"job", "tensors", "nvidia-smi"};
  std::vector<TextTable::Align> align = {TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right};
  for (const auto& c : cards) headers.push_back(format_gib(c.usable_bytes, 0) + " GB"), align.push_back(TextTable::Align::Right);
  TextTable table(headers, align);
  std::uint64_t params = 0;
  for (const auto& r : rows) {
    auto e = estimate(*model, r.options);
    if (!e) return make_error(e.error());
    params = e->n_params;
    std::vector<std::string> cells = {r.label, format_gib(e->peak_allocated_bytes, 1), format_gib(e->process_bytes, 1)};
    for (const auto& c : cards) cells.push_back(fits(*e, c.usable_bytes) ? style.paint("fits", Tone::Good) : style.paint("OOM", Tone::Bad));
    table.add_row(cells);
  }
  std::string card_names, line;  // wrapped under its heading, within 100 columns
  for (std::size_t i = 0; i < cards.size(); ++i) {
    const std::string item = format_gib(cards[i].usable_bytes, 0) + " GB: " + std::string(cards[i].name) + " (" +
                             format_gib(cards[i].usable_bytes, 1) + " GiB)" + (i + 1 < cards.size() ? "," : "");
    if (!line.empty() && 12 + line.size() + 1 + item.size() > 100) card_names += line + "\n            ", line.clear();
    line += (line.empty() ? "" : " ") + item;
  }
  card_names += line;
  const Options defaults;
  std::string out = "vramdoc estimate: will a 7B model fit? " + model->name + " (" + fixed(double(params) / 1e9, 2) +
                    "B parameters) on one GPU,\nbatch " + std::to_string(defaults.batch) + " x seq " +
                    std::to_string(defaults.seq) + ", no gradient checkpointing; no GPU is needed to estimate.\n\n";
  out += table.render() + "\n";
  out += "tensors     peak of torch.cuda.max_memory_allocated(), GiB\n";
  out += "nvidia-smi  what the process holds on the card (PyTorch's cache and the CUDA context too),\n"
         "            GiB: the number compared with each card, plus a safety margin of " + std::to_string(kFitMarginPercent) + " %\n";
  out += "cards       " + card_names + "\n";
  out += "amp bf16    fp32 weights, gradients and AdamW state, computed in bf16: what the Hugging Face\n"
         "            Trainer's bf16=True does; bf16 weights: the model itself in bf16 (torch_dtype=bfloat16)\n";
  out += "LoRA        adapters of rank " + std::to_string(lora.lora_rank) + " on " + targets +
         " (the attention's query and value projections,\n            PEFT's default for this model), the base frozen in bf16\n\n";
  out += "One row in detail: vramdoc estimate --model " + name + " --mode lora --gpu 'RTX 4090'\n";
  out += "Your own model:    vramdoc estimate --config path/to/model-dir --batch 4 --seq 2048 --gpu 'RTX 4090'\n";
  return out;
}

}  // namespace vramdoc::estimator
