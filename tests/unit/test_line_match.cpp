// The line matcher for job output (core/line_match.hpp), issue 25: std::regex recursed per
// character (run --step-regex '.*step (\d+)' segfaulted on a 50 KB line) and backtracked without
// bound ('(a+)+$' on a 31-character line never ended, ignoring SIGTERM). RE2 is linear.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/line_match.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc {
namespace {

TEST(LineMatch, AFiftyKilobyteLineDoesNotCrash) {
  auto m = LineMatcher::compile(".*step (\\d+)", "--step-regex");
  ASSERT_TRUE(m) << m.error();
  const std::string line = std::string(60000, 'x') + " step 5";
  const auto g = m->groups(line);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->size(), 1U);
  EXPECT_EQ(*(*g)[0], "5");
}

// Regression: exponential backtracking. Linear time makes a run of these instant; the old engine
// took 2^31 steps for one.
TEST(LineMatch, NestedQuantifiersOnALongRunEndAtOnce) {
  auto m = LineMatcher::compile("(a+)+$", "--step-regex");
  ASSERT_TRUE(m) << m.error();
  for (int i = 0; i < 200; ++i) EXPECT_FALSE(m->search(std::string(31 + i, 'a') + "!"));
  EXPECT_TRUE(m->search(std::string(31, 'a')));
}

TEST(LineMatch, BackreferencesAndLookaroundAreClearErrorsNamingTheOption) {
  auto back = LineMatcher::compile("(step) \\1", "--step-regex");
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().find("--step-regex '(step) \\1'"), std::string::npos) << back.error();
  EXPECT_NE(back.error().find("backreferences (\\1) are not supported"), std::string::npos) << back.error();
  auto ahead = LineMatcher::compile("step(?= done)", "--step-regex");
  ASSERT_FALSE(ahead);
  EXPECT_NE(ahead.error().find("lookaround"), std::string::npos) << ahead.error();
  auto bad = LineMatcher::compile("(", "--step-regex");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("is not a valid regular expression"), std::string::npos) << bad.error();
  auto huge = LineMatcher::compile("((a{1000}){1000}){1000}", "--step-regex");
  EXPECT_FALSE(huge);  // refused, not built: its automaton would not fit the memory bound
}

// One case rule for run and probe (docs/cli.md): case-sensitive, (?i) to ignore case.
TEST(LineMatch, CaseSensitiveUnlessThePatternSaysOtherwise) {
  auto plain = LineMatcher::compile("step ([0-9]+)", "--step-regex");
  auto folded = LineMatcher::compile("(?i)step ([0-9]+)", "--step-regex");
  ASSERT_TRUE(plain && folded);
  EXPECT_FALSE(plain->search("Step 3"));
  EXPECT_TRUE(folded->search("Step 3"));
}

TEST(LineMatch, OnlyTheFirstSixtyFourKilobytesOfALineAreMatched) {
  auto m = LineMatcher::compile("needle", "--step-regex");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->search(std::string(kMaxMatchedLineBytes - 6, 'x') + "needle"));
  EXPECT_FALSE(m->search(std::string(kMaxMatchedLineBytes, 'x') + "needle"));
}

// Fuzz: patterns made of the pieces that hurt backtracking engines, on long hostile lines. Each
// pattern compiles or is refused with a message; each match ends (linear time, no recursion).
TEST(LineMatch, FuzzedPatternsAndLinesNeverHangOrCrash) {
  std::mt19937 rng(25);
  const std::string pieces[] = {"(a+)+", "(a|aa)*", ".*", "(.*)*", "a{1,1000}", "\\1", "(?=a)", "[", "(", ")", "\\d+",
                                "$", "^", "(?i)", "x?", "[^a]", "(?P<n>a)", "\\b", "|", "step ([0-9]+)"};
  const std::string line = std::string(20000, 'a') + std::string(20000, ' ') + "step 12" + std::string(30000, 'a') + "!";
  int compiled = 0;
  for (int i = 0; i < 300; ++i) {
    std::string pattern;
    for (int k = 1 + static_cast<int>(rng() % 6); k > 0; --k) pattern += pieces[rng() % (sizeof pieces / sizeof pieces[0])];
    auto m = LineMatcher::compile(pattern, "--step-regex");
    if (!m) {
      EXPECT_NE(m.error().find("--step-regex '"), std::string::npos) << m.error();
      continue;
    }
    ++compiled;
    (void)m->search(line);
    (void)m->groups(line.substr(rng() % line.size()));
  }
  EXPECT_GT(compiled, 50);
}

TEST(LineSplitter, LinesEndAtNewlineOrReturnAndALongOneIsGivenOnceCut) {
  std::vector<std::string> got;
  LineSplitter s;
  const auto keep = [&](std::string_view line) { got.emplace_back(line); };
  s.feed("step 1\rstep", keep);
  s.feed(" 2\n\n", keep);
  s.feed(std::string(kMaxMatchedLineBytes + 100, 'x') + "\nend", keep);
  s.finish(keep);
  ASSERT_EQ(got.size(), 4U);
  EXPECT_EQ(got[0], "step 1");
  EXPECT_EQ(got[1], "step 2");
  EXPECT_EQ(got[2].size(), kMaxMatchedLineBytes);
  EXPECT_EQ(got[3], "end");
}

// Regression: a TensorFlow OOM line whose shape holds a 400-digit number threw std::out_of_range
// out of std::stod: `run` died ("internal error: stod") and the job with it, `analyze` called the
// timeline invalid.
TEST(OomMessage, AnAbsurdShapeIsNotAnException) {
  const std::string line = "ResourceExhaustedError: OOM when allocating tensor with shape[" + std::string(400, '9') +
                           ",2] and type float";
  std::optional<timeline::OomMessage> m;
  ASSERT_NO_THROW(m = timeline::parse_oom_message(line));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->framework, "tensorflow");
  EXPECT_FALSE(m->requested_bytes);
  const auto ok = timeline::parse_oom_message("OOM when allocating tensor with shape[8,1024] and type half");
  ASSERT_TRUE(ok && ok->requested_bytes);
  EXPECT_EQ(*ok->requested_bytes, 8U * 1024 * 2);
}

TEST(OomMessage, ALongLineOfSpacesAndDigitsIsLinear) {
  const std::string line = "ResourceExhaustedError shape [" + std::string(60000, ' ') + std::string(3000, '1') + "]";
  EXPECT_TRUE(timeline::parse_oom_message(line));
  EXPECT_EQ(timeline::step_number(" step " + std::string(50000, ' ') + "12"), 12);
  EXPECT_EQ(timeline::step_number(" step " + std::string(kMaxMatchedLineBytes, ' ') + "12"), std::nullopt);  // past the cap
  EXPECT_EQ(timeline::step_number("Step: 12 loss 3"), 12);
}

}  // namespace
}  // namespace vramdoc
