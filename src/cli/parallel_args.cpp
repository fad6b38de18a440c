#include "cli/parallel_args.hpp"

#include <algorithm>

#include <CLI/CLI.hpp>

#include "cli/estimator_options.hpp"
#include "core/units.hpp"

namespace vramdoc::cli {

namespace est = vramdoc::estimator;

void add_parallel_options(CLI::App& app, ParallelArgs& a) {
  app.add_option("--gpus", a.gpus, "all GPUs of the job (data-parallel ranks x --tp; default: --tp); the estimate is per GPU");
  app.add_option("--tp", a.tp, "tensor-parallel degree (attention and MLP split; embeddings, lm_head, norms whole)")
      ->capture_default_str();
  app.add_flag("--fsdp", a.fsdp, "shard with FSDP (default with --gpus > --tp: DDP)");
  app.add_option("--fsdp-version", a.fsdp_version, "2: fully_shard per decoder layer; 1: FullyShardedDataParallel")
      ->capture_default_str();
  app.add_flag("--no-reshard", a.no_reshard, "FSDP keeps gathered layers from forward to backward (FSDP2 "
                                              "reshard_after_forward=False, FSDP1 SHARD_GRAD_OP)");
  app.add_option("--shard-group", a.shard_group, "FSDP shards over this many GPUs and replicates across groups (HYBRID_SHARD / HSDP)");
  app.add_option("--zero", a.zero, "DeepSpeed ZeRO stage 1-3 (0: none)")->check(CLI::Range(0, 3));
  app.add_option("--zero-reduce-bucket", a.zero_reduce_bucket, "ZeRO reduce_bucket_size in elements (default 5e8)");
  app.add_option("--zero-max-live", a.zero_max_live, "ZeRO-3 stage3_max_live_parameters in elements (default 1e9)");
  app.add_option("--zero-persistence", a.zero_persistence, "ZeRO-3 stage3_param_persistence_threshold in elements (default 1e5)");
  app.add_option("--offload", a.offload, "none | optimizer (ZeRO offload_optimizer) | all (FSDP CPU offload, ZeRO-3 offload_param)")
      ->capture_default_str();
  app.add_flag("--ddp-bucket-view", a.ddp_bucket_view, "DDP gradient_as_bucket_view=True (no second copy of the gradients)");
  app.add_option("--nccl-buffsize", a.nccl_buffsize, "NCCL_BUFFSIZE")->capture_default_str();
  app.add_option("--rank", a.rank, "one rank's numbers, 0 to --gpus - 1 (default: the rank that needs the most; "
                                   "ranks differ under FSDP1)");
}

namespace {

// A count that may be written like DeepSpeed's configs: 500000000 or 5e8.
Result<std::uint64_t> elements(const std::string& text, const std::string& option) {
  if (text.empty()) return make_error(option + " needs a number");
  const std::size_t e = text.find_first_of("eE");
  if (e == std::string::npos) return positive_integer(text, option);
  auto mantissa = positive_integer(text.substr(0, e), option);
  auto exponent = positive_integer(text.substr(e + 1), option);
  if (!mantissa || !exponent || *exponent > 18) return make_error(option + " must be a positive count like 500000000 or 5e8, got '" + text + "'");
  std::uint64_t v = *mantissa;
  for (std::uint64_t i = 0; i < *exponent; ++i) {
    auto next = checked_mul(v, 10);
    if (!next) return make_error(option + " is too large: '" + text + "'");
    v = *next;
  }
  return v;
}

Result<bool> apply_zero(const ParallelArgs& a, est::ParallelOptions& p) {
  for (auto [text, option, field] : {std::tuple{&a.zero_reduce_bucket, "--zero-reduce-bucket", &p.zero_reduce_bucket},
                                     std::tuple{&a.zero_max_live, "--zero-max-live", &p.zero_max_live_parameters},
                                     std::tuple{&a.zero_persistence, "--zero-persistence", &p.zero_persistence_threshold}}) {
    if (text->empty()) continue;
    auto v = elements(*text, option);
    if (!v) return make_error(v.error());
    *field = *v;
  }
  return true;
}

}  // namespace

Result<bool> apply_parallel(const ParallelArgs& a, est::Options& o) {
  auto tp = positive_integer(a.tp, "--tp");
  if (!tp) return make_error(tp.error());
  o.tensor_parallel = *tp;
  auto gpus = a.gpus.empty() ? Result<std::uint64_t>(*tp) : positive_integer(a.gpus, "--gpus");
  if (!gpus) return make_error(gpus.error());
  o.gpus = *gpus;
  if (a.fsdp && a.zero > 0) return make_error("--fsdp and --zero exclude each other");
  o.zero_stage = a.zero;
  est::ParallelOptions& p = o.parallel;
  p.data = a.zero > 0 ? est::DataParallel::Zero : a.fsdp ? est::DataParallel::Fsdp : est::DataParallel::Ddp;
  if (a.fsdp_version != "1" && a.fsdp_version != "2") return make_error("--fsdp-version must be 1 or 2, got '" + a.fsdp_version + "'");
  p.fsdp_version = a.fsdp_version == "1" ? 1 : 2;
  p.reshard_after_forward = !a.no_reshard;
  p.ddp_bucket_view = a.ddp_bucket_view;
  if (!a.shard_group.empty()) {
    auto g = positive_integer(a.shard_group, "--shard-group");
    if (!g) return make_error(g.error());
    p.shard_group = *g;
  }
  if (a.offload == "none" || a.offload == "optimizer" || a.offload == "all") {
    p.offload = a.offload == "none" ? est::Offload::None : a.offload == "optimizer" ? est::Offload::Optimizer : est::Offload::All;
  } else {
    return make_error("--offload must be none, optimizer or all, got '" + a.offload + "'");
  }
  auto buffsize = parse_size(a.nccl_buffsize);
  if (!buffsize || *buffsize == 0) return make_error("--nccl-buffsize: " + (buffsize ? std::string("must be positive") : buffsize.error()));
  p.nccl_buffsize = *buffsize;
  if (!a.rank.empty()) {
    const bool digits = a.rank.size() <= 19 && std::all_of(a.rank.begin(), a.rank.end(), ::isdigit);
    if (!digits || std::stoull(a.rank) >= o.gpus) {
      return make_error("--rank must be a rank from 0 to --gpus - 1 (" + std::to_string(o.gpus - 1) + "), got '" + a.rank + "'");
    }
    p.rank = std::stoull(a.rank);
  }
  return apply_zero(a, p);
}

}  // namespace vramdoc::cli
