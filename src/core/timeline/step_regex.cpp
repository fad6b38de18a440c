#include "core/timeline/step_regex.hpp"

#include "core/line_match.hpp"

namespace vramdoc::timeline {

// RE2 through LineMatcher: linear in the line, bounded memory, no recursion (issue 25), and
// "(?i)" at the start is RE2's own flag syntax.
struct StepRegex::Impl {
  LineMatcher matcher;
};

StepRegex::StepRegex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StepRegex::StepRegex(StepRegex&&) noexcept = default;
StepRegex& StepRegex::operator=(StepRegex&&) noexcept = default;
StepRegex::~StepRegex() = default;

Result<StepRegex> StepRegex::compile(const std::string& pattern) {
  auto m = LineMatcher::compile(pattern, "--step-regex");
  if (!m) return make_error(m.error());
  return StepRegex(std::make_unique<Impl>(Impl{std::move(*m)}));
}

bool StepRegex::matches(std::string_view line) const { return impl_->matcher.search(line); }

std::optional<std::string> StepRegex::step_label(std::string_view line, long& counter) const {
  const auto groups = impl_->matcher.groups(line);
  if (!groups) return std::nullopt;
  ++counter;
  if (!groups->empty() && (*groups)[0]) {
    const std::string_view g = *(*groups)[0];
    if (!g.empty() && g.find_first_not_of("0123456789") == std::string_view::npos && g.size() < 12) return "step " + std::string(g);
  }
  return "step " + std::to_string(counter - 1);
}

}  // namespace vramdoc::timeline
