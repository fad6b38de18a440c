// The axes of vramdoc's charts: round tick values (1, 2 or 5 x 10^n of the unit shown), the unit
// chosen from the range (bytes as GiB, MiB or KiB; time as s, min or h), and their labels.
#pragma once
#include <string>
#include <vector>

namespace vramdoc::chart {

enum class Quantity { Bytes, Seconds, Count };

// How an axis shows its values: value in the unit = raw value / scale.
struct Unit {
  std::string name;  // "GiB", "MiB", "KiB", "B", "s", "min", "h", "" (a count)
  double scale = 1;
};

// The unit for values up to `largest`: GiB from 1 GiB, MiB from 1 MiB, ...; seconds up to
// 10 minutes, minutes up to 10 hours, hours beyond; a count has no unit.
Unit unit_for(Quantity q, double largest);

// About `target` round ticks covering [lo, hi] in the unit: the step is 1, 2 or 5 x 10^n, the
// first tick the largest multiple of it at or below lo, the last the smallest at or above hi.
struct Ticks {
  double step = 1;
  std::vector<double> values;  // in the unit
};
Ticks round_ticks(double lo, double hi, int target);

// A tick's label, with as many decimals as the step needs: "0.5", "1.5", "200".
std::string tick_label(double value, double step);

}  // namespace vramdoc::chart
