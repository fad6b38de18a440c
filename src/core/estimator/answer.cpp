#include "core/estimator/answer.hpp"

#include "core/estimator/fit.hpp"
#include "core/estimator/presets.hpp"
#include "core/json_document.hpp"
#include "core/table.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

// The card to fit on: --gpu-memory, else --gpu, else the local GPU 0 (none: fit.usable_bytes stays empty).
Result<bool> choose_target(const FitRequest& request, FitReport& fit, std::vector<std::string>& notes) {
  if (!request.gpu.empty()) {
    auto card = find_gpu(request.gpu);
    if (!card) return make_error("--gpu: " + card.error());
    fit.target_name = std::string(card->name), fit.usable_bytes = card->usable_bytes;
    // An AMD card: the estimate holds (PyTorch's caching allocator is the same on ROCm), the rest of vramdoc does not run there.
    if (card->vendor == Vendor::Amd)
      notes.push_back("note: " + std::string(card->name) + " is an AMD GPU: this estimate holds for PyTorch on ROCm, but "
                      "vramdoc's CUDA tools (info, bench, watch, run, probe) do not run there");
  }
  if (request.gpu_memory_bytes) fit.target_name = format_bytes(*request.gpu_memory_bytes), fit.usable_bytes = request.gpu_memory_bytes;
  if (!fit.usable_bytes && request.local_gpu) {
    if (auto local = request.local_gpu()) {
      fit.target_name = "local GPU 0" + (local->name.empty() ? std::string() : ": " + local->name);
      fit.usable_bytes = local->total_bytes;
    }
  }
  if ((request.max_batch || request.max_seq) && !fit.usable_bytes)
    return make_error("--max-batch / --max-seq need --gpu or --gpu-memory (no local GPU was found)");
  return true;
}

}  // namespace

Result<Answer> answer(const ModelConfig& model, const Options& options, const FitRequest& request) {
  auto e = estimate(model, options);
  if (!e) return make_error(e.error() + (request.config.empty() ? "" : " (" + request.config + ")"));
  Answer a{std::move(*e), {}, {}, {}, true};
  a.fit.fits_on = cards_that_fit(a.estimate);
  if (auto t = choose_target(request, a.fit, a.notes); !t) return make_error(t.error());
  if (request.max_batch) {
    auto r = max_batch(model, options, *a.fit.usable_bytes);
    if (!r) return make_error(r.error());
    a.fit.max_batch = *r;
  }
  if (request.max_seq) {
    auto r = max_seq(model, options, *a.fit.usable_bytes);
    if (!r) return make_error(r.error());
    a.fit.max_seq = *r;
  }
  a.fits = !a.fit.usable_bytes || fits(a.estimate, *a.fit.usable_bytes);
  a.fit.remedy_request = {a.fit.usable_bytes, request.max_batch};
  auto fixes = remedies(model, options, a.fit.remedy_request);
  if (!fixes) return make_error(fixes.error());
  a.fit.remedies = std::move(*fixes);
  if (model.family == Family::Generic && request.python_available && request.python_available())
    a.hints.push_back("note: Python is here: measure the job itself on the CPU with vramdoc estimate -- python train.py ...");
  return a;
}

std::string render_models(bool json) {
  TextTable t({"name", "what"});
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const auto& p : presets()) {
    t.add_row({std::string(p.name), std::string(p.description)});
    models.push_back({{"name", p.name}, {"description", p.description}});
  }
  if (!json) return t.render();
  return json_document("vramdoc.models/1", nlohmann::ordered_json{{"models", models}});
}

std::string render_gpus(bool json) {
  TextTable t({"card", "nvidia-smi name", "total", "note"}, {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Left});
  nlohmann::ordered_json cards = nlohmann::ordered_json::array();
  for (const auto& c : gpu_cards()) {
    const bool amd = c.vendor == Vendor::Amd;
    const std::string note = std::string(amd ? "AMD: estimate only" : "") + (c.derived ? "derived (docs/cli.md)" : "");
    t.add_row({std::string(c.name), std::string(c.smi_name), format_bytes(c.usable_bytes), note});
    cards.push_back({{"name", c.name}, {"smi_name", c.smi_name}, {"vendor", amd ? "amd" : "nvidia"},
                     {"total_bytes", c.usable_bytes}, {"derived", c.derived}});
  }
  if (!json) return t.render();
  return json_document("vramdoc.gpus/1", nlohmann::ordered_json{{"gpus", cards}});
}

}  // namespace vramdoc::estimator
