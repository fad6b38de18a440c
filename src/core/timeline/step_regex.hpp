// --step-regex, the one definition `run` and `probe` share: a line of the job's output matching
// it ends a step (group 1, when a number, is the step's). One case rule in both commands
// (docs/cli.md): case-sensitive, as grep and Python's re are; "(?i)" at the start ignores case
// (probe's default starts with it: "Step 3" and "ITER 3" count). Probe counts the steps of each
// trial with it and passes it on to the `vramdoc run` of the trial, so both see the same steps.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc::timeline {

// Probe's default: "step 3", "iter: 12", "Iteration #4" in any case (with a word boundary before it).
inline constexpr const char* kDefaultProbeStepRegex = R"((?i)(^|[^a-z])(step|iter|iteration)[ :=#]*[0-9]+)";
// The help text of the option in both commands.
inline constexpr const char* kStepRegexHelp =
    "a line of the job's output matching this regular expression ends a step (case-sensitive; (?i) at the "
    "start ignores case; group 1, when a number, is the step's)";

class StepRegex {
 public:
  // Compiles `pattern`; the error names --step-regex and says why it is not valid.
  static Result<StepRegex> compile(const std::string& pattern);
  StepRegex(StepRegex&&) noexcept;
  StepRegex& operator=(StepRegex&&) noexcept;
  ~StepRegex();
  // Whether `line` holds a match.
  bool matches(std::string_view line) const;
  // The mark for a matching line: "step G" when group 1 is a number G (< 12 digits), else
  // "step N" with N the count of matches before this one (`counter` counts them); empty when
  // the line does not match.
  std::optional<std::string> step_label(std::string_view line, long& counter) const;

 private:
  struct Impl;
  explicit StepRegex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vramdoc::timeline
