// The pieces of the Prometheus text exposition that every family writer shares (vramdoc's own
// metrics in prometheus.cpp, dcgm-exporter's in dcgm.cpp): labels, values, one family's lines.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vramdoc::watch {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A sample value: integers (byte counts up to 2^53) exactly, others with 6 significant digits,
// NaN and +Inf / -Inf spelled as the format wants.
std::string format_value(double value);

// "{k="v",...}" with each value fit to publish (label_value) and escaped; "" for no labels.
std::string label_text(const Labels& labels);

// One metric family: HELP and TYPE once, then the samples whose value is known. Samples are
// buffered so that a family's lines stay together however the callers interleave them.
class Family {
 public:
  Family(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}
  // Adds a sample; an unknown value adds nothing (never 0).
  void add(const Labels& labels, std::optional<double> value);
  // The family's lines as a gauge; empty when no sample was known.
  std::string text() const;

 private:
  std::string name_;
  std::string help_;
  std::string body_;
};

// An optional number as a double, times `scale`; empty stays empty.
template <class T>
std::optional<double> as_double(const std::optional<T>& v, double scale = 1.0) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) * scale;
}

}  // namespace vramdoc::watch
