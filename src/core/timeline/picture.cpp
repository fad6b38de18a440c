#include "core/timeline/picture.hpp"

namespace vramdoc::timeline {

void add_readings(const Timeline& tl, Picture& p) {
  if (tl.samples.empty()) return;
  p.t0 = tl.samples.front().t_seconds, p.t1 = tl.samples.back().t_seconds;
  const double width = (p.t1 - p.t0) / static_cast<double>(kPictureBins) * (1 + 1e-9);
  chart::MinMaxReducer used(kPictureBins, width), allocated(kPictureBins, width), device(kPictureBins, width);
  for (const auto& s : tl.samples) {
    used.add(s.t_seconds, static_cast<double>(s.process_used_bytes));
    if (s.allocated_bytes) allocated.add(s.t_seconds, static_cast<double>(*s.allocated_bytes));
    if (s.device_used_bytes) device.add(s.t_seconds, static_cast<double>(*s.device_used_bytes));
  }
  p.used = used.points(), p.allocated = allocated.points(), p.device = device.points();
}

}  // namespace vramdoc::timeline
