#include "core/timeline/preallocation.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "core/timeline/oom_message.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

constexpr double kPoolShare = 0.40;      // a jump to this share of the card or more ...
constexpr double kBeforeShare = 0.10;    // ... from below this share ...
constexpr double kJumpSeconds = 0.25;    // ... within this long
constexpr double kJaxDefault = 0.75;     // XLA_PYTHON_CLIENT_MEM_FRACTION's default
constexpr double kJaxDefaultBand = 0.025;
constexpr double kNearlyAll = 0.90;      // TensorFlow's default takes nearly all free memory
constexpr double kHeldSeconds = 2.0;     // a pool is held while the job runs, not for one step

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool env_is(const Timeline& tl, const std::string& name, std::initializer_list<const char*> values) {
  auto it = tl.environment.find(name);
  if (it == tl.environment.end()) return false;
  const std::string v = lower(it->second);
  return std::any_of(values.begin(), values.end(), [&](const char* x) { return v == x; });
}

}  // namespace

const std::vector<std::string>& allocator_settings() {
  static const std::vector<std::string> names = {
      "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR", "TF_FORCE_GPU_ALLOW_GROWTH",
      "TF_GPU_ALLOCATOR", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING"};
  return names;
}

std::string preallocating_framework(const Timeline& tl, bool& opted_out) {
  opted_out = env_is(tl, "XLA_PYTHON_CLIENT_PREALLOCATE", {"false", "0"}) ||
              env_is(tl, "XLA_PYTHON_CLIENT_ALLOCATOR", {"platform"}) ||
              env_is(tl, "TF_FORCE_GPU_ALLOW_GROWTH", {"true", "1"});
  std::string words;
  for (const auto& arg : tl.command) words += lower(arg) + " ";
  for (const auto& [name, value] : tl.environment) {
    if (name.starts_with("XLA_") || name.starts_with("JAX_")) words += " jax ";
    if (name.starts_with("TF_")) words += " tensorflow ";
  }
  if (words.find("vllm") != std::string::npos) return "vLLM";
  if (words.find("tensorflow") != std::string::npos || words.find("keras") != std::string::npos) return "TensorFlow";
  if (words.find("jax") != std::string::npos || words.find("flax") != std::string::npos || words.find("xla") != std::string::npos)
    return "JAX/XLA";
  return "";
}

bool grows_a_framework_pool(const Timeline& tl) {
  bool opted_out = false;
  const std::string framework = preallocating_framework(tl, opted_out);
  return (framework == "JAX/XLA" || framework == "TensorFlow") && !env_is(tl, "XLA_PYTHON_CLIENT_ALLOCATOR", {"platform"});
}

std::optional<Preallocation> find_preallocation(const Timeline& tl, std::uint64_t capacity_bytes, double tolerance_bytes) {
  bool opted_out = false;
  const std::string framework = preallocating_framework(tl, opted_out);
  const double cap = static_cast<double>(capacity_bytes);
  if (opted_out || cap <= 0) return std::nullopt;
  const auto& s = tl.samples;
  auto pool = std::find_if(s.begin(), s.end(), [&](const Sample& x) { return double(x.process_used_bytes) >= kPoolShare * cap; });
  if (pool == s.end()) return std::nullopt;
  auto before = std::find_if(std::make_reverse_iterator(pool), s.rend(),
                             [&](const Sample& x) { return double(x.process_used_bytes) < kBeforeShare * cap; });
  if (pool != s.begin() && (before == s.rend() || pool->t_seconds - before->t_seconds > kJumpSeconds)) return std::nullopt;
  const double level = double(pool->process_used_bytes), slack = std::max(tolerance_bytes, 0.02 * cap);
  double held_until = pool->t_seconds;
  for (auto it = pool; it != s.end(); ++it) {
    if (double(it->process_used_bytes) > level + slack) return std::nullopt;  // the pool grew: not a fixed pool
    if (double(it->process_used_bytes) >= level - slack) held_until = it->t_seconds;
  }
  if (held_until - pool->t_seconds < kHeldSeconds) return std::nullopt;  // a step's peak before an OOM, not a pool
  Preallocation p{framework, level / cap, pool->t_seconds, pool->process_used_bytes};
  const bool default_share = std::fabs(p.fraction - kJaxDefault) <= kJaxDefaultBand || p.fraction >= kNearlyAll;
  const bool pytorch_oom = (tl.oom && tl.oom->framework == "pytorch") ||
                           std::any_of(tl.messages.begin(), tl.messages.end(), [](const std::string& m) {
                             auto oom = parse_oom_message(m);
                             return oom && oom->framework == "pytorch";
                           });
  if (framework.empty() && (!default_share || pytorch_oom)) return std::nullopt;  // PyTorch's own cache is no preallocated pool
  return p;
}

std::string preallocation_hides(const Preallocation& p) {
  const std::string who = p.framework.empty() ? "the framework" : p.framework;
  return who + " took " + format_bytes(p.pool_bytes) + " (" + std::to_string(std::lround(100 * p.fraction)) +
         " % of the card) at " + std::to_string(p.at_seconds).substr(0, 4) + " s and allocates inside that pool: the driver's number "
         "stays flat whatever the job keeps, so a leak, or the job's real peak, cannot be seen until the pool runs out";
}

std::string preallocation_see_through(const Preallocation& p) {
  if (p.framework == "TensorFlow")
    return "record again with TF_FORCE_GPU_ALLOW_GROWTH=true (memory taken as needed), or log "
           "tf.config.experimental.get_memory_info('GPU:0')['current'] at each step";
  if (p.framework == "vLLM")
    return "the pool is vLLM's KV cache (--gpu-memory-utilization): watch vLLM's own KV-cache usage metrics instead of the driver's number";
  return "record again with XLA_PYTHON_CLIENT_PREALLOCATE=false (the pool grows as needed) or XLA_PYTHON_CLIENT_ALLOCATOR=platform "
         "(every buffer allocated and freed exactly: slower, but the driver sees each one), or log "
         "jax.devices()[0].memory_stats()['bytes_in_use'] at each step";
}

}  // namespace vramdoc::timeline
