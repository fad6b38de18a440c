#include "core/timeline/accounting.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "core/timeline/stats.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

constexpr double kMiB = 1048576.0;
constexpr std::size_t kMinUnits = 6;
constexpr std::size_t kMaxTrendPoints = 400;  // Theil-Sen is quadratic: evenly thinned beyond this
constexpr double kSignificant = 3.09;          // Mann-Kendall z: increasing at p < 0.001

// Growth that counts on a level: 32 MiB, and a twentieth of its typical size.
double growth_floor(const std::vector<double>& y) { return std::max(32 * kMiB, 0.05 * median(y)); }
// Beyond PyTorch's cache the driver's bytes grew slowly in a job that keeps nothing: the serving
// job of issue 29 (generate() of random sizes), 46 MiB over 605 forward calls, 7 % of the level,
// the same with CUDA_MODULE_LOADING=EAGER (so not lazy kernel loading; cause not found). Growth
// there counts from 64 MiB and a tenth of the level; the extension's leak was 12 MiB a step.
double driver_growth_floor(const std::vector<double>& y) { return std::max(64 * kMiB, 0.10 * median(y)); }

std::vector<double> thinned(const std::vector<double>& v) {
  if (v.size() <= kMaxTrendPoints) return v;
  std::vector<double> out;
  for (std::size_t k = 0; k < kMaxTrendPoints; ++k) out.push_back(v[k * (v.size() - 1) / (kMaxTrendPoints - 1)]);
  return out;
}

LevelFigures figures(const std::vector<double>& y, double (*floor)(const std::vector<double>&) = growth_floor) {
  LevelFigures f;
  if (y.empty()) return f;
  f.first_bytes = static_cast<std::uint64_t>(std::max(0.0, y.front()));
  f.last_bytes = static_cast<std::uint64_t>(std::max(0.0, y.back()));
  const std::vector<double> ys = thinned(y);
  std::vector<double> xs(ys.size());
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i) * static_cast<double>(y.size() - 1) / std::max<double>(1, double(ys.size() - 1));
  f.growth_bytes_per_unit = theil_sen_slope(xs, ys).value_or(0);
  f.mk_z = mann_kendall(ys).z;
  f.grows = f.mk_z > kSignificant && f.growth_bytes_per_unit * static_cast<double>(y.size() - 1) >= floor(y);
  return f;
}

// The process's driver reading at or before `t` (the last one before it when none is at it).
std::optional<double> driver_at(const Timeline& tl, double t) {
  auto after = std::upper_bound(tl.samples.begin(), tl.samples.end(), t, [](double v, const Sample& s) { return v < s.t_seconds; });
  if (after == tl.samples.begin()) return std::nullopt;
  return static_cast<double>(std::prev(after)->process_used_bytes);
}

bool starts_evaluation(const std::string& label) { return label == "phase eval" || label == "eval begin"; }
bool ends_evaluation(const std::string& label) { return label == "phase train" || label == "eval end"; }

// The driver's rises within [start, end]: separate level changes above a tolerance.
std::size_t rises_within(const Timeline& tl, double start, double end, double& start_bytes, double& peak_bytes) {
  std::size_t rises = 0;
  std::optional<double> level;
  // the samples are in time order: only those within [start, end] are looked at (a long recording
  // with many evaluations stays linear)
  auto first = std::lower_bound(tl.samples.begin(), tl.samples.end(), start, [](const Sample& s, double v) { return s.t_seconds < v; });
  for (auto it = first; it != tl.samples.end() && it->t_seconds <= end; ++it) {
    const Sample& s = *it;
    if (s.process_used_bytes == 0) continue;
    const double y = static_cast<double>(s.process_used_bytes);
    if (!level) {
      level = start_bytes = peak_bytes = y;
      continue;
    }
    peak_bytes = std::max(peak_bytes, y);
    const double tolerance = std::max(8 * kMiB, 0.005 * *level);
    if (y > *level + tolerance) ++rises, level = y;
    else if (y < *level - tolerance) level = y;
  }
  return rises;
}

// The value of `key=` in a mark's label, "" when absent.
std::string field(const std::string& label, const std::string& key) {
  const std::size_t at = (" " + label).find(" " + key + "=");
  if (at == std::string::npos) return "";
  const std::size_t start = at + key.size() + 1;  // `at` counts the space put in front
  const std::size_t end = label.find(' ', start);
  return label.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

const char* level_name(Level level) {
  switch (level) {
    case Level::Tensors: return "PyTorch's tensors";
    case Level::Cache: return "PyTorch's cache beyond its tensors";
    case Level::Driver: break;
  }
  return "the driver beyond PyTorch's cache";
}

bool is_forward_mark(const Mark& m) { return m.label.starts_with("forward ") && m.label.find_first_not_of("0123456789", 8) == std::string::npos && m.label.size() > 8; }

std::vector<const Mark*> unit_marks(const Timeline& tl) {
  std::vector<const Mark*> steps, forwards;
  for (const auto& m : tl.marks) {
    if (step_number(m.label)) steps.push_back(&m);
    else if (is_forward_mark(m)) forwards.push_back(&m);
  }
  return steps.empty() ? forwards : steps;
}

bool hook_marked(const Timeline& tl) {
  return std::any_of(tl.marks.begin(), tl.marks.end(), [](const Mark& m) { return m.pid.has_value(); });
}

std::optional<Accounting> account(const Timeline& tl) {
  Accounting a;
  std::vector<double> tensors, cache, driver;
  const auto units = unit_marks(tl);
  for (const Mark* m : units) {
    if (!m->allocated_bytes || !m->reserved_bytes) continue;
    const auto d = driver_at(tl, m->t_seconds);
    if (!d || *d == 0) continue;  // not yet charged, or already gone
    const double allocated = double(*m->allocated_bytes), reserved = double(*m->reserved_bytes);
    tensors.push_back(allocated);
    cache.push_back(std::max(0.0, reserved - allocated));
    driver.push_back(std::max(0.0, *d - reserved));
  }
  if (tensors.size() < kMinUnits) return std::nullopt;
  a.unit = step_number(units.front()->label) ? "step" : "forward call";
  a.units = tensors.size();
  const auto from = static_cast<long>(std::max<std::size_t>(2, tensors.size() / 5));
  auto after = [&](const std::vector<double>& v) { return std::vector<double>(v.begin() + from, v.end()); };
  a.tensors = figures(after(tensors));
  a.cache = figures(after(cache));
  a.driver = figures(after(driver), driver_growth_floor);
  if (a.tensors.grows) a.growing = Level::Tensors;
  else if (a.driver.grows) a.growing = Level::Driver;
  else if (a.cache.grows) a.growing = Level::Cache;
  return a;
}

std::optional<EvaluationGrowth> evaluation_accumulates(const Timeline& tl, std::optional<double> oom_seconds) {
  if (tl.samples.empty()) return std::nullopt;
  const double last = tl.samples.back().t_seconds;
  std::optional<EvaluationGrowth> best;
  for (std::size_t i = 0; i < tl.marks.size(); ++i) {
    if (!starts_evaluation(tl.marks[i].label)) continue;
    EvaluationGrowth g;
    g.start_seconds = tl.marks[i].t_seconds;
    g.end_seconds = last;
    std::vector<double> tensors;
    for (std::size_t k = i + 1; k < tl.marks.size(); ++k) {
      const auto& m = tl.marks[k];
      if (ends_evaluation(m.label) || starts_evaluation(m.label)) {
        g.end_seconds = m.t_seconds;
        break;
      }
      if (is_forward_mark(m) && m.allocated_bytes) tensors.push_back(double(*m.allocated_bytes));
    }
    g.ended_in_oom = oom_seconds && *oom_seconds >= g.start_seconds && *oom_seconds <= g.end_seconds + 0.5;
    double start_bytes = 0, peak_bytes = 0;
    const std::size_t rises = rises_within(tl, g.start_seconds, g.end_seconds, start_bytes, peak_bytes);
    g.start_bytes = static_cast<std::uint64_t>(start_bytes);
    g.peak_bytes = static_cast<std::uint64_t>(peak_bytes);
    g.forward_calls = tensors.size();
    bool accumulates = false;
    if (tensors.size() >= kMinUnits) {  // the tensors themselves, at each evaluation batch's end
      const LevelFigures f = figures(tensors);
      g.tensors_growth_bytes_per_call = f.growth_bytes_per_unit;
      accumulates = f.grows;
    } else {  // the driver's number alone: rising again and again within the evaluation
      // (a single large evaluation batch rises once or twice; the Trainer's logits, 0.5 s from
      // the first evaluation batch to the OOM on the H200, rose 3 times at 50 ms sampling)
      accumulates = (rises >= 4 || (rises >= 3 && g.ended_in_oom)) && peak_bytes - start_bytes >= 0.25 * start_bytes;
    }
    if (accumulates && (!best || g.peak_bytes - g.start_bytes > best->peak_bytes - best->start_bytes)) best = g;
  }
  return best;
}

std::vector<std::string> allocator_in_effect(const Timeline& tl) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string text) {
    if (seen.insert(text).second) out.push_back(std::move(text));
  };
  auto conf = [&](const std::string& key, const std::string& value) {
    const bool expandable = value.find("expandable_segments:True") != std::string::npos || value.find("expandable_segments:true") != std::string::npos;
    add(key + "=" + value + (expandable ? " (expandable segments on)" : ""));
  };
  for (const char* key : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
    if (auto it = tl.environment.find(key); it != tl.environment.end()) conf(key, it->second);
  if (auto it = tl.environment.find("PYTORCH_NO_CUDA_MEMORY_CACHING"); it != tl.environment.end() && it->second == "1")
    add("PYTORCH_NO_CUDA_MEMORY_CACHING=1 (no cache: reserved is allocated)");
  for (const auto& m : tl.marks) {
    if (!m.label.starts_with("allocator ")) continue;
    for (const char* key : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
      if (auto v = field(m.label, key); !v.empty()) conf(key, v);
    if (auto f = field(m.label, "fraction"); !f.empty()) {
      std::string text = "per-process memory fraction " + f;
      std::uint64_t limit = 0;
      const std::string b = field(m.label, "limit_bytes");
      if (std::from_chars(b.data(), b.data() + b.size(), limit).ec == std::errc() && limit > 0) text += " (limit " + format_bytes(limit) + ")";
      add(text);
    }
  }
  return out;
}

std::optional<std::uint64_t> fraction_limit_bytes(const Timeline& tl) {
  std::optional<std::uint64_t> out;
  for (const auto& m : tl.marks) {
    if (!m.label.starts_with("allocator ")) continue;
    const std::string b = field(m.label, "limit_bytes");
    std::uint64_t limit = 0;
    if (std::from_chars(b.data(), b.data() + b.size(), limit).ec == std::errc() && limit > 0) out = limit;
  }
  return out;
}

}  // namespace vramdoc::timeline
