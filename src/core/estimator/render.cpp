#include "core/estimator/render.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/estimator/parallel.hpp"
#include "core/json_document.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

const Term* biggest_term(const Phase& p) {
  const Term* best = nullptr;
  for (const auto& t : p.terms) {
    if (!best || t.bytes > best->bytes) best = &t;
  }
  return best;
}

std::string gib(std::uint64_t bytes) { return format_gib_unit(bytes); }

std::string params_text(std::uint64_t n) {
  char buf[32];
  if (n >= 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.2fB", static_cast<double>(n) / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fM", static_cast<double>(n) / 1e6);
  }
  return buf;
}

bool several_gpus(const Options& o) { return o.gpus > 1 || o.tensor_parallel > 1; }

std::string wrapper_name(const Options& o) {
  if (data_parallel_degree(o) == 1) return "none";
  switch (wrapper(o)) {
    case DataParallel::Ddp: return "ddp";
    case DataParallel::Fsdp: return o.parallel.fsdp_version == 1 ? "fsdp1" : "fsdp2";
    case DataParallel::Zero: return "zero" + std::to_string(o.zero_stage);
  }
  return "none";
}

// ", per GPU of 8: FSDP2 shards over 8, TP 2" for the title line.
std::string parallel_title(const Options& o) {
  if (!several_gpus(o)) return "";
  const std::uint64_t dp = data_parallel_degree(o);
  std::string out = ", per GPU of " + std::to_string(o.gpus) + ":";
  if (dp > 1) {
    const std::string name = wrapper_name(o);
    if (name == "ddp") {
      out += std::string(" DDP over ") + std::to_string(dp) + (o.parallel.ddp_bucket_view ? " (bucket view)" : "");
    } else {
      std::string upper = name;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out += " " + (wrapper(o) == DataParallel::Zero ? "ZeRO-" + std::to_string(o.zero_stage) : upper) + " shards over " +
             std::to_string(shard_degree(o));
      if (wrapper(o) == DataParallel::Fsdp && !o.parallel.reshard_after_forward) out += " (no reshard after forward)";
    }
  }
  if (o.tensor_parallel > 1) out += std::string(dp > 1 ? "," : "") + " TP " + std::to_string(o.tensor_parallel);
  return out;
}

nlohmann::json parallel_json(const Options& o, const Estimate& e) {
  const char* offload[] = {"none", "optimizer", "all"};
  return {{"data_parallel", wrapper_name(o)},
          {"data_parallel_ranks", data_parallel_degree(o)},
          {"shard_degree", shard_degree(o)},
          {"reshard_after_forward", o.parallel.reshard_after_forward},
          {"ddp_bucket_view", o.parallel.ddp_bucket_view},
          {"offload", offload[static_cast<int>(o.parallel.offload)]},
          {"nccl_buffsize", o.parallel.nccl_buffsize},
          {"nccl_communicators", nccl_communicators(o).total()},
          {"nccl_bytes", e.nccl_bytes}};
}

std::string peak_table(const Estimate& e, bool per_rank) {
  const Phase& peak = e.phases[e.peak_phase];
  const Term* big = biggest_term(peak);
  std::vector<std::string> headers = {"at the peak: " + peak.name, "GiB"};
  if (per_rank) headers.push_back("per rank");
  headers.push_back("");
  TextTable table(headers);
  auto row = [&](const std::string& label, std::uint64_t bytes, const std::string& split, const std::string& mark) {
    std::vector<std::string> r = {label, format_gib(bytes)};
    if (per_rank) r.push_back(split);
    r.push_back(mark);
    table.add_row(r);
  };
  for (const auto& t : peak.terms) row(t.label, t.bytes, t.sharding, &t == big ? "<- biggest" : "");
  const bool own_workspaces = std::any_of(peak.terms.begin(), peak.terms.end(), [](const Term& t) { return t.key == "workspaces_bytes"; });
  if (!own_workspaces) row("cuBLAS workspaces", e.workspace_bytes, "", "");  // a CNN's phases hold them (and cuDNN's) as a term
  table.add_rule();
  row("peak allocated (torch.cuda.max_memory_allocated)", e.peak_allocated_bytes, "", "");
  row("peak reserved (caching allocator)", e.peak_reserved_bytes, "", "");
  if (e.nccl_bytes > 0) row("NCCL communicators (outside PyTorch)", e.nccl_bytes, "", "");
  row(e.nccl_bytes > 0 ? "process total (nvidia-smi; + CUDA context, NCCL)" : "process total (nvidia-smi; + CUDA context)",
      e.process_bytes, "", "");
  return table.render("  ");
}


// "to fit on RTX 3060 12GB, cheapest first (each estimated for this job):" and a line per remedy.
std::string remedies_text(const FitReport& fit, bool job_fits) {
  const auto& req = fit.remedy_request;
  const std::string card = terminal_safe(fit.target_name.value_or(""));
  if (fit.remedies.empty()) {
    if (req.usable_bytes && (req.max_batch ? fit.max_batch && fit.max_batch->value == 0 : !job_fits))
      return "remedies: none of those the estimator models (docs/estimator.md, \"Remedies\") helps this job on " + card + "\n";
    return "";
  }
  std::string out = "\n";
  if (!req.usable_bytes) out += "to lower the peak, cheapest first (each estimated for this job):\n";
  else if (req.max_batch) out += "for a larger batch on " + card + ", cheapest first (each estimated for this job):\n";
  else out += "to fit on " + card + ", cheapest first (each estimated for this job):\n";
  TextTable table({"", "", ""}, {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left});
  for (const auto& r : fit.remedies) {
    const std::string what = r.card.empty() ? r.option : r.option + " (" + format_gib_unit(r.card_bytes) + ")";
    table.add_row({what, r.name, remedy_result(r, req)});
  }
  std::string rows = table.render("  ");
  // The table's header row and rule are empty here: drop them.
  for (int i = 0; i < 2; ++i) rows = rows.substr(rows.find('\n') + 1);
  return out + rows;
}

nlohmann::json remedies_json(const FitReport& fit) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : fit.remedies) {
    nlohmann::json j = {{"name", r.name}, {"option", r.option}, {"cost", r.cost}, {"process_bytes", r.process_bytes},
                        {"saving_bytes", r.saving_bytes}};
    j["fits"] = r.fits ? nlohmann::json(*r.fits) : nlohmann::json(nullptr);
    if (r.batch) j["batch"] = *r.batch, j["batch_process_bytes"] = r.batch_process_bytes, j["accumulation_steps"] = r.accumulation_steps;
    if (!r.card.empty()) j["card"] = r.card, j["card_bytes"] = r.card_bytes;
    list.push_back(j);
  }
  return list;
}

}  // namespace

std::vector<std::string> cards_that_fit(const Estimate& e) {
  std::vector<std::string> names;
  for (const auto& c : gpu_cards()) {
    if (fits(e, c.usable_bytes)) names.emplace_back(c.name);
  }
  return names;
}

std::string render_json(const ModelConfig& model, const Options& o, const Estimate& e, const FitReport& fit) {
  using nlohmann::json;
  json j;
  j["model"] = model.name;
  j["model_type"] = model.model_type;
  j["family"] = std::string(family_name(model.family));
  j["mode"] = std::string(to_string(o.mode));
  j["precision"] = std::string(to_string(o.precision));
  j["batch"] = o.batch;
  j["seq"] = o.seq;
  if (model.kind == ModelKind::Cnn) j["image_size"] = o.image_size > 0 ? o.image_size : model.cnn.image_size;
  j["attention"] = std::string(to_string(attention_of(model, o)));
  if (o.mode != Mode::Infer) j["optimizer"] = std::string(to_string(o.optimizer));
  j["grad_checkpointing"] = o.grad_checkpointing;
  j["gpus"] = o.gpus;
  j["zero_stage"] = o.zero_stage;
  j["tensor_parallel"] = o.tensor_parallel;
  j["parallel"] = parallel_json(o, e);
  if (o.quant != Quant::None) j["quant"] = std::string(to_string(o.quant));
  if (o.new_tokens > 0) j["new_tokens"] = o.new_tokens;
  j["expandable_segments"] = o.expandable_segments;
  j["n_params"] = e.n_params;
  j["n_trainable"] = e.n_trainable;
  j["peak_allocated_bytes"] = e.peak_allocated_bytes;
  j["peak_reserved_bytes"] = e.peak_reserved_bytes;
  j["allocator_cached_bytes"] = e.cached_bytes;
  j["process_bytes"] = e.process_bytes;
  const Phase& peak = e.phases[e.peak_phase];
  j["peak_phase"] = peak.name;
  json breakdown = json::object();
  for (const auto& t : peak.terms) breakdown[t.key] = t.bytes;
  breakdown["cublas_workspace_bytes"] = e.workspace_bytes;
  breakdown["allocator_reserve_bytes"] = e.peak_reserved_bytes - e.peak_allocated_bytes;
  breakdown["cuda_context_bytes"] = e.context_bytes;
  if (e.nccl_bytes > 0) breakdown["nccl_bytes"] = e.nccl_bytes;
  if (e.outside_allocator_bytes > 0) breakdown["outside_allocator_bytes"] = e.outside_allocator_bytes;
  j["breakdown"] = breakdown;
  json sharding = json::object();
  for (const auto& t : peak.terms) {
    if (!t.sharding.empty()) sharding[t.key] = t.sharding;
  }
  j["sharding"] = sharding;
  json phases = json::array();
  for (const auto& p : e.phases) {
    json terms = json::object();
    for (const auto& t : p.terms) terms[t.key] = t.bytes;
    phases.push_back({{"name", p.name},
                      {"allocated_bytes", p.allocated_bytes},
                      {"cached_bytes", p.cached_bytes},
                      {"terms", terms}});
  }
  j["phases"] = phases;
  if (e.checkpointing_saves_bytes > 0) j["grad_checkpointing_saves_bytes"] = e.checkpointing_saves_bytes;
  if (e.ddp_rebuild_risk_bytes > 0) j["ddp_rebuild_risk_bytes"] = e.ddp_rebuild_risk_bytes;
  j["fits_on"] = fit.fits_on;
  if (fit.usable_bytes) {
    j["gpu"] = {{"name", fit.target_name.value_or("")},
                {"usable_bytes", *fit.usable_bytes},
                {"fits", fits(e, *fit.usable_bytes)},
                {"margin_percent", kFitMarginPercent}};
  }
  auto search = [](const SearchResult& r) {
    return json{{"value", r.value}, {"process_bytes", r.process_bytes}, {"headroom_bytes", r.headroom_bytes}};
  };
  // Asked for and nothing fits: null (unknown is never 0 in vramdoc's JSON, docs/cli.md).
  if (fit.max_batch) j["max_batch"] = fit.max_batch->value ? search(*fit.max_batch) : json(nullptr);
  if (fit.max_seq) j["max_seq"] = fit.max_seq->value ? search(*fit.max_seq) : json(nullptr);
  j["remedies"] = remedies_json(fit);
  j["warnings"] = e.warnings;
  return json_document("vramdoc.estimate/1", j, JsonLayout::Line);
}

std::string render_text(const ModelConfig& model, const Options& o, const Estimate& e, const FitReport& fit, const Style& style) {
  const bool cnn = model.kind == ModelKind::Cnn;  // a convolutional classifier: its architecture and its images
  const std::string image = std::to_string(o.image_size > 0 ? o.image_size : model.cnn.image_size);
  std::string out = terminal_safe(model.name) + " (" + (cnn ? terminal_safe(model.model_type) + " cnn" : std::string(family_name(model.family))) +
                    ", " + params_text(e.n_params) + " parameters): " + std::string(to_string(o.mode)) + ", " +
                    std::string(to_string(o.precision)) + ", batch " + std::to_string(o.batch) +
                    (cnn ? ", images " + image + " x " + image : " x seq " + std::to_string(o.seq));
  if (o.mode != Mode::Infer) out += ", " + std::string(to_string(o.optimizer));
  if (o.grad_checkpointing) out += ", gradient checkpointing";
  if (o.quant != Quant::None) out += ", weights quantised " + std::string(to_string(o.quant));
  if (o.new_tokens > 0) out += ", generating " + std::to_string(o.new_tokens) + " tokens";
  out += parallel_title(o) + "\n\n";
  out += peak_table(e, several_gpus(o));
  if (fit.usable_bytes) {
    const bool ok = fits(e, *fit.usable_bytes);
    const std::string size = gib(*fit.usable_bytes);
    const std::string name = terminal_safe(fit.target_name.value_or(size));  // the local GPU's name: the driver's
    out += "\n" + style.paint(ok ? "FITS" : "DOES NOT FIT", ok ? Tone::Good : Tone::Bad) + " on " + name + (name == size ? "" : " (" + size + ")") +
           " with a safety margin of " + std::to_string(kFitMarginPercent) + " %\n";
  }
  auto search = [&](const char* what, const std::optional<SearchResult>& r) {
    if (!r) return;
    out += r->value == 0 ? std::string("largest ") + what + " that fits: none, not even 1\n"
                         : std::string("largest ") + what + " that fits: " + std::to_string(r->value) + " (" +
                               gib(r->process_bytes) + ", " + gib(r->headroom_bytes) + " to spare)\n";
  };
  search("batch", fit.max_batch);
  search("sequence length", fit.max_seq);
  std::string cards;
  for (const auto& c : fit.fits_on) cards += (cards.empty() ? "" : ", ") + c;
  out += "\nfits on: " + (cards.empty() ? std::string("none of the listed cards") : cards) + "\n";
  out += remedies_text(fit, !fit.usable_bytes || fits(e, *fit.usable_bytes));
  return out;
}

}  // namespace vramdoc::estimator
