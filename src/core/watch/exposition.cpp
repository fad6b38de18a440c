#include "core/watch/exposition.hpp"

#include <cmath>
#include <cstdio>

#include "core/watch/prometheus.hpp"

namespace vramdoc::watch {

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[40];
  if (value == std::floor(value) && std::fabs(value) < 9.007199254740992e15) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", value);
  }
  return buf;
}

std::string label_text(const Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=\"" + escape_label_value(label_value(v)) + "\"";
  return out.empty() ? out : "{" + out + "}";
}

void Family::add(const Labels& labels, std::optional<double> value) {
  if (!value) return;
  body_ += name_ + label_text(labels) + " " + format_value(*value) + "\n";
}

std::string Family::text() const {
  if (body_.empty()) return "";
  return "# HELP " + name_ + " " + help_ + "\n# TYPE " + name_ + " gauge\n" + body_;
}

}  // namespace vramdoc::watch
