#include "core/chart/axis.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"

namespace vramdoc::chart {

Unit unit_for(Quantity q, double largest) {
  switch (q) {
    case Quantity::Bytes: {
      constexpr double KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
      if (largest >= GiB) return {"GiB", GiB};
      if (largest >= MiB) return {"MiB", MiB};
      if (largest >= KiB) return {"KiB", KiB};
      return {"B", 1};
    }
    case Quantity::Seconds:
      if (largest > 10 * 3600) return {"h", 3600};
      if (largest > 600) return {"min", 60};
      return {"s", 1};
    case Quantity::Count: break;
  }
  return {"", 1};
}

Ticks round_ticks(double lo, double hi, int target) {
  Ticks t;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  const double span = hi - lo > 0 ? hi - lo : std::max(std::abs(hi), 1.0);
  const double rough = span / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  t.step = magnitude * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {  // the smallest round step giving at most `target` intervals
    if (m * magnitude >= rough * (1 - 1e-9)) {
      t.step = m * magnitude;
      break;
    }
  }
  const double first = std::floor(lo / t.step + 1e-9) * t.step;
  double last = std::ceil(hi / t.step - 1e-9) * t.step;
  if (last <= first) last = first + t.step;
  for (double v = first; v <= last + t.step * 1e-6; v += t.step) t.values.push_back(std::abs(v) < t.step * 1e-9 ? 0 : v);
  return t;
}

std::string tick_label(double value, double step) {
  int decimals = 0;
  while (decimals < 6 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6) ++decimals;
  return fixed(value, decimals);
}

}  // namespace vramdoc::chart
