// The reader and report of `run --trace-python`'s python.PID.json (core/trace/python_stacks.hpp).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/trace/python_stacks.hpp"
#include "mutate_text.hpp"

namespace vramdoc::trace {
namespace {

// What the hook (src/backends/run/sitecustomize.py) writes for a leaking loop.
constexpr const char* kGood = R"({"format": "vramdoc-python-stacks", "version": 1, "pid": 4242, "torch": "2.11.0+cu130",
  "allocated_bytes": 110100480, "peak_allocated_bytes": 220200960, "groups_left_out": 0,
  "groups": [
    {"device": 0, "bytes": 5242880, "count": 5, "frames": [
      {"file": "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", "line": 125, "function": "forward", "library": true},
      {"file": "/home/u/train.py", "line": 19, "function": "leaky_cache_append", "library": false},
      {"file": "/home/u/train.py", "line": 44, "function": "main", "library": false}]},
    {"device": 1, "bytes": 104857600, "count": 1, "frames": [
      {"file": "/home/u/train.py", "line": 30, "function": "main", "library": false}]},
    {"bytes": 1024, "count": 1, "frames": [
      {"file": "<frozen importlib._bootstrap>", "line": 1, "function": "_load", "library": true}]}
  ]})";

TEST(PythonStacks, ReadsTheHooksFileLargestFirst) {
  auto s = parse_python_stacks(kGood);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->pid, 4242);
  EXPECT_EQ(s->torch_version, "2.11.0+cu130");
  EXPECT_EQ(s->allocated_bytes, 110100480u);
  ASSERT_EQ(s->groups.size(), 3u);
  EXPECT_EQ(s->groups[0].bytes, 104857600u);
  EXPECT_EQ(s->groups[0].device, 1u);
  EXPECT_EQ(s->groups[1].count, 5u);
  EXPECT_EQ(s->groups[2].device, 0u);  // absent: device 0
}

TEST(PythonStacks, CallSiteIsTheInnermostFrameOutsideLibraries) {
  auto s = parse_python_stacks(kGood);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(python_call_site_index(s->groups[1].frames), 1u);
  EXPECT_EQ(describe(s->groups[1].frames[1]), "train.py:19 leaky_cache_append");
  // Only library frames: the innermost one.
  EXPECT_EQ(python_call_site_index(s->groups[2].frames), 0u);
  EXPECT_EQ(python_call_site_index({}), 0u);
}

TEST(PythonStacks, TextNamesTheLinesAndMarksUserFrames) {
  auto s = parse_python_stacks(kGood);
  ASSERT_TRUE(s.ok());
  const std::string text = render_python_stacks_text({*s}, {"/t/python.1.json: not JSON"});
  EXPECT_NE(text.find("/t/python.1.json: not JSON"), std::string::npos);
  EXPECT_NE(text.find("process 4242 at exit (torch 2.11.0+cu130): 105.00 MiB allocated, peak 210.00 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("100.00 MiB      1  train.py:30 main [cuda:1]"), std::string::npos) << text;
  EXPECT_NE(text.find("5.00 MiB      5  train.py:19 leaky_cache_append"), std::string::npos) << text;
  EXPECT_NE(text.find("      > train.py:44 main"), std::string::npos) << text;
  EXPECT_NE(text.find("        linear.py:125 forward"), std::string::npos) << text;
  const auto json = python_stacks_json({*s});
  EXPECT_EQ(json[0]["groups"][1]["call_site"], "train.py:19 leaky_cache_append");
  EXPECT_EQ(json[0]["groups"][1]["call_site_frame"], 1);
}

TEST(PythonStacks, NoProcessAndHookErrorsAreExplained) {
  EXPECT_NE(render_python_stacks_text({}, {}).find("no Python process wrote its stacks"), std::string::npos);
  auto s = parse_python_stacks(R"({"format": "vramdoc-python-stacks", "version": 1, "pid": 7, "error": "TypeError: x"})");
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_NE(render_python_stacks_text({*s}, {}).find("process 7: the hook could not record: TypeError: x"), std::string::npos);
}

// The record the OOM observer writes: what held the memory when a request failed; it reads
// before the same process's exit record.
TEST(PythonStacks, OomRecordIsReadRenderedAndSortedFirst) {
  const std::string oom = R"({"format": "vramdoc-python-stacks", "version": 1, "pid": 4242, "when": "oom", "torch": "2.11",
    "oom": {"device": 0, "requested_bytes": 22548578304, "device_allocated_bytes": 130000000000, "device_free_bytes": 19971597926},
    "allocated_bytes": 129000000000, "peak_allocated_bytes": 129000000000,
    "groups": [{"bytes": 64424509440, "count": 32, "frames": [{"file": "/home/u/train.py", "line": 51, "function": "forward_all"}]}]})";
  auto o = parse_python_stacks(oom);
  ASSERT_TRUE(o.ok()) << o.error();
  ASSERT_TRUE(o->oom.has_value());
  EXPECT_EQ(o->oom->requested_bytes, 22548578304u);
  auto e = parse_python_stacks(kGood);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->oom.has_value());
  std::vector<PythonStacks> records{*e, *o};
  sort_python_stacks(records);
  ASSERT_TRUE(records[0].oom.has_value());
  const std::string text = render_python_stacks_text(records, {});
  const auto at_oom = text.find("process 4242 at its first out-of-memory error (torch 2.11)");
  ASSERT_NE(at_oom, std::string::npos) << text;
  EXPECT_LT(at_oom, text.find("process 4242 at exit"));
  EXPECT_NE(text.find("cuda:0 was asked for 21.00 GiB with 18.60 GiB free"), std::string::npos) << text;
  EXPECT_NE(text.find("60.00 GiB     32  train.py:51 forward_all"), std::string::npos) << text;
  EXPECT_EQ(python_stacks_json(records)[0]["when"], "oom");
  EXPECT_EQ(python_stacks_json(records)[1]["oom"], nullptr);
}

TEST(PythonStacks, BadFilesGiveClearErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "not JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"format": "other", "version": 1})", "not a vramdoc Python stacks file"},
      {R"({"format": "vramdoc-python-stacks", "version": 2, "groups": []})", "format version 2"},
      {R"({"format": "vramdoc-python-stacks", "version": 1})", "\"groups\" is missing"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": -1, "count": 1}]})",
       "group 1: \"bytes\" is not a non-negative integer"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1.5, "count": 1}]})",
       "\"bytes\" is not a non-negative integer"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1e30, "count": 1}]})",
       "\"bytes\" is not a non-negative integer"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1}]})", "group 1: no \"count\""},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1, "count": 1, "device": 4294967296}]})",
       "\"device\" is too large"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1, "count": 1, "frames": [{"line": 3}]}]})",
       "group 1, frame 1: no \"file\""},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1, "count": 1, "frames": [{"file": "a", "library": 1}]}]})",
       "\"library\" is not true or false"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1, "count": 1, "frames": {}}]})",
       "\"frames\" is not a list"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "pid": -3, "groups": []})", "\"pid\" is not a non-negative integer"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "when": "later", "groups": []})", "\"when\" is neither"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "when": "oom", "groups": []})", "\"oom\" is missing"},
      {R"({"format": "vramdoc-python-stacks", "version": 1, "when": "oom", "oom": {"device": 0}, "groups": []})",
       "\"oom\": no \"requested_bytes\""},
  };
  for (const auto& [text, want] : cases) {
    auto s = parse_python_stacks(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.error().find(want), std::string::npos) << text << " -> " << s.error();
  }
}

TEST(PythonStacks, SizeLimitsAreRefusedNotTruncated) {
  std::string frames;
  for (int i = 0; i < 257; ++i) frames += std::string(i ? "," : "") + R"({"file": "a.py", "line": 1})";
  auto s = parse_python_stacks(R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1, "count": 1, "frames": [)" +
                               frames + "]}]}");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("more than 256 frames"), std::string::npos);
  const std::string long_name(5000, 'x');
  s = parse_python_stacks(R"({"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": 1, "count": 1, "frames": [{"file": ")" +
                          long_name + R"("}]}]})");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("longer than 4096 bytes"), std::string::npos);
  // Counts that would overflow when summed for the "more stacks" line.
  s = parse_python_stacks(R"({"format": "vramdoc-python-stacks", "version": 1, "groups_left_out": 18446744073709551615,
                              "groups": [{"bytes": 18446744073709551615, "count": 18446744073709551615}]})");
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_NE(render_python_stacks_text({*s}, {}, 0).find("more stacks"), std::string::npos);
}

// Mutations of a valid file (bytes flipped, cut, duplicated): each must give an error or stacks
// the renderers get through.
TEST(PythonStacks, MutationFuzz) {
  std::mt19937 rng(7);
  const std::string seeds[] = {kGood, R"({"format": "vramdoc-python-stacks", "version": 1, "pid": 1, "when": "oom",
    "oom": {"device": 1, "requested_bytes": 2048, "device_allocated_bytes": 4096, "device_free_bytes": 0},
    "groups": [{"bytes": 4096, "count": 2, "frames": [{"file": "t.py", "line": 3, "function": "f", "library": false}]}]})"};
  const char alphabet[] = "0123456789-.,:[]{}\"e nulltrue";
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string text = fuzz::mutate_text(seeds[round % 2], rng, alphabet);
    auto s = parse_python_stacks(text);
    if (!s.ok()) {
      ++rejected;
      EXPECT_FALSE(s.error().empty());
      continue;
    }
    ++accepted;
    EXPECT_FALSE(render_python_stacks_text({*s}, {}).empty());
    EXPECT_FALSE(python_stacks_json({*s}).dump().empty());
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace vramdoc::trace
