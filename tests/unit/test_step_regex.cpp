// --step-regex: one definition for run and probe (issue 26: run matched case-sensitively, probe's
// trial counter ignored case, and probe handed its regex to run, so the two counted different steps).
#include <gtest/gtest.h>

#include "core/timeline/step_regex.hpp"

namespace vramdoc::timeline {
namespace {

StepRegex compiled(const std::string& pattern) {
  auto re = StepRegex::compile(pattern);
  EXPECT_TRUE(re.ok()) << (re.ok() ? "" : re.error());
  return std::move(*re);
}

TEST(StepRegex, RunAndProbeShareOneCaseRule) {
  const auto plain = compiled("step ([0-9]+)");
  EXPECT_TRUE(plain.matches("step 3 loss 1.0"));
  EXPECT_FALSE(plain.matches("Step 3 loss 1.0"));  // case-sensitive, as grep and Python's re are
  const auto folded = compiled("(?i)step ([0-9]+)");
  EXPECT_TRUE(folded.matches("STEP 3"));
  const auto probe_default = compiled(kDefaultProbeStepRegex);
  for (const char* line : {"step 3", "Step 3", "ITER: 12", "Iteration #4", "[rank0] step=7"})
    EXPECT_TRUE(probe_default.matches(line)) << line;
  for (const char* line : {"stepping 3", "steps", "upstep3x"}) EXPECT_FALSE(probe_default.matches(line)) << line;
}

TEST(StepRegex, LabelIsGroupOneWhenANumberElseACount) {
  const auto re = compiled("(?i)epoch ([0-9a-z]+)");
  long counter = 0;
  EXPECT_EQ(re.step_label("epoch 12 done", counter), "step 12");
  EXPECT_EQ(re.step_label("epoch abc", counter), "step 1");  // group 1 not a number: the count before it
  EXPECT_EQ(re.step_label("nothing here", counter), std::nullopt);
  EXPECT_EQ(counter, 2);
}

TEST(StepRegex, AnInvalidPatternNamesTheOption) {
  auto re = StepRegex::compile("(");
  ASSERT_FALSE(re.ok());
  EXPECT_NE(re.error().find("--step-regex '(' is not a valid regular expression"), std::string::npos) << re.error();
}

}  // namespace
}  // namespace vramdoc::timeline
