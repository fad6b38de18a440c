#include "core/timeline/step_regex.hpp"

#include <regex>

namespace vramdoc::timeline {

struct StepRegex::Impl {
  std::regex re;
};

StepRegex::StepRegex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StepRegex::StepRegex(StepRegex&&) noexcept = default;
StepRegex& StepRegex::operator=(StepRegex&&) noexcept = default;
StepRegex::~StepRegex() = default;

Result<StepRegex> StepRegex::compile(const std::string& pattern) {
  // "(?i)" at the start, as Perl, Python and RE2 write it: std::regex takes it as a flag.
  const bool ignore_case = pattern.starts_with("(?i)");
  const auto flags = ignore_case ? std::regex::ECMAScript | std::regex::icase : std::regex::ECMAScript;
  try {
    return StepRegex(std::make_unique<Impl>(Impl{std::regex(ignore_case ? pattern.substr(4) : pattern, flags)}));
  } catch (const std::regex_error& e) {
    return make_error("--step-regex '" + pattern + "' is not a valid regular expression: " + e.what());
  }
}

bool StepRegex::matches(std::string_view line) const { return std::regex_search(line.begin(), line.end(), impl_->re); }

std::optional<std::string> StepRegex::step_label(std::string_view line, long& counter) const {
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(line.begin(), line.end(), m, impl_->re)) return std::nullopt;
  ++counter;
  if (m.size() > 1 && m[1].matched) {
    const std::string g = m[1].str();
    if (!g.empty() && g.find_first_not_of("0123456789") == std::string::npos && g.size() < 12) return "step " + g;
  }
  return "step " + std::to_string(counter - 1);
}

}  // namespace vramdoc::timeline
