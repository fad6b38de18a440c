// Timeline readers: both formats, a round trip of ours, and bad input of every kind -> an error
// naming the input, or a timeline the classifier handles; never a crash.
#include <gtest/gtest.h>

#include <random>

#include "core/timeline/classify.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/writer.hpp"
#include "mutate_text.hpp"

namespace vramdoc::timeline {
namespace {

const char* kShared = R"({"name": "t", "total": 1000000000, "outcome": "ok",
  "columns": ["t", "process_used", "device_used", "torch_allocated", "torch_reserved"],
  "samples": [[0.0, 100, 200, 10, 20], [0.02, 150, null, 15, 25], [0.04, 150, 250, 15, 25]],
  "marks": [[0.03, "step 0", 15, 25], [0.04, "epoch 1", 15, 25]]})";

// Issue 32: version 1 kept the marks file's line as the label; its allocated= was left as text and a
// leak inside the allocator's cache was judged "stable" on the flat driver number.
TEST(TimelineReader, Issue32Version1MarkLabelsGiveTheirAllocatedFigures) {
  const std::string text = std::string(R"({"columns":["t","process_used","device_used"],"vramdoc_timeline":1,"name":"j"})") + "\n" +
                           "[0.0,4096,8192]\n" + R"({"mark":"step 3 allocated=1048576 reserved=2097152","t":0.5})" + "\n" +
                           R"({"mark":"epoch 1 a=b","t":0.6})" + "\n";
  auto tl = read_timeline(text, "v1.jsonl");
  ASSERT_TRUE(tl.ok()) << tl.error();
  ASSERT_EQ(tl->marks.size(), 2u);
  EXPECT_EQ(tl->marks[0].label, "step 3");
  EXPECT_EQ(tl->marks[0].allocated_bytes, std::optional<std::uint64_t>(1048576));
  EXPECT_EQ(tl->marks[0].reserved_bytes, std::optional<std::uint64_t>(2097152));
  EXPECT_EQ(tl->marks[1].label, "epoch 1 a=b");  // no figures: the label stays as written
  EXPECT_FALSE(tl->marks[1].allocated_bytes.has_value());
}

TEST(TimelineReader, SharedFormatWithOptionalColumns) {
  auto tl = read_timeline(kShared, "x.json");
  ASSERT_TRUE(tl.ok()) << tl.error();
  ASSERT_EQ(tl->samples.size(), 3u);
  EXPECT_EQ(tl->samples[1].process_used_bytes, 150u);
  EXPECT_FALSE(tl->samples[1].device_used_bytes.has_value());  // null is unknown, not 0
  EXPECT_EQ(*tl->samples[2].allocated_bytes, 15u);
  EXPECT_EQ(tl->marks.size(), 2u);
  EXPECT_EQ(*tl->total_bytes, 1000000000u);
  EXPECT_EQ(tl->outcome, Outcome::Ok);
}

TEST(TimelineReader, OnlyTimeAndProcessUsed) {
  auto tl = read_timeline(R"({"columns": ["process_used", "t"], "samples": [[5, 0.1], [6, 0.2]]})", "y");
  ASSERT_TRUE(tl.ok()) << tl.error();
  EXPECT_EQ(tl->samples[1].process_used_bytes, 6u);
  EXPECT_DOUBLE_EQ(tl->samples[1].t_seconds, 0.2);
  EXPECT_FALSE(tl->samples[0].allocated_bytes);
}

TEST(TimelineReader, OurFormatRoundTripAndTruncatedLastLine) {
  Timeline tl;
  tl.samples = {{0, 100, 300, {}, {}}, {0.02, 200, std::nullopt, {}, {}}};
  tl.marks = {{0.01, "step 0", {}, {}, {}}};
  tl.messages = {"CUDA out of memory. Tried to allocate 2.00 GiB."};
  tl.outcome = Outcome::Oom;
  tl.exit_status = 1;
  Header h;
  h.name = "job";
  h.total_bytes = 1000;
  const std::string text = write_timeline(tl, h);
  auto back = read_timeline(text, "j.jsonl");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->name, "job");
  ASSERT_EQ(back->samples.size(), 2u);
  EXPECT_EQ(*back->samples[0].device_used_bytes, 300u);
  EXPECT_FALSE(back->samples[1].device_used_bytes);
  EXPECT_EQ(back->marks[0].label, "step 0");
  EXPECT_EQ(back->outcome, Outcome::Oom);
  EXPECT_EQ(*back->exit_status, 1);
  EXPECT_EQ(write_timeline(*back, h), text);  // byte-exact round trip
  // A file still being written: the last line is cut short, the rest reads.
  auto partial = read_timeline(text.substr(0, text.find("\n", text.find("\n") + 1) + 5), "j.jsonl");
  ASSERT_TRUE(partial.ok()) << partial.error();
  EXPECT_EQ(partial->samples.size(), 1u);
}

TEST(TimelineReader, BadInputGivesErrorsNamingTheInput) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty"},
      {"   \n", "empty"},
      {std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10), "not a timeline"},
      {R"({"samples": [[0, 1], [0.1, 2]], "columns": ["t", "process_used"])", "not a timeline"},  // truncated
      {R"([1, 2, 3])", "not a timeline"},
      {R"({"samples": "many"})", "samples"},
      {R"({"columns": ["t", "process_used"], "samples": [[0, "lots"]]})", "process_used is not a number"},
      {R"({"columns": ["t", "process_used"], "samples": [[0, -5]]})", "out of range"},
      {R"({"columns": ["t", "process_used"], "samples": [[0, 1e300]]})", "out of range"},
      {R"({"columns": ["t", "process_used"], "samples": [[0, 1, 2]]})", "is not a list of 2 values"},
      {R"({"columns": ["t", "process_used"], "samples": [[1, 1], [0.5, 1]]})", "goes back in time"},
      {R"({"columns": ["time", "used"], "samples": []})", "must name"},
      {R"({"columns": ["t", "process_used"], "samples": [], "total": "big"})", "total"},
      {"{\"vramdoc_timeline\": 3, \"columns\": [\"t\", \"process_used\"]}\n", "version 3"},
      {"{\"vramdoc_timeline\": 1, \"columns\": [\"t\", \"process_used\"]}\n[0, 1]\nnonsense\n[1, 2]\n", "line 3"},
  };
  for (const auto& [text, want] : cases) {
    auto tl = read_timeline(text, "bad.json");
    ASSERT_FALSE(tl.ok()) << "accepted: " << text;
    EXPECT_NE(tl.error().find("bad.json"), std::string::npos) << tl.error();
    EXPECT_NE(tl.error().find(want), std::string::npos) << tl.error() << " (wanted '" << want << "')";
  }
}

TEST(TimelineReader, AbsurdButValidValuesAreJudgedNotCrashed) {
  auto tl = read_timeline(R"({"columns": ["t", "process_used"], "total": 0,
    "samples": [[0, 0], [0, 0], [0, 1152921504606846976], [1e9, 0]]})", "absurd");
  ASSERT_TRUE(tl.ok()) << tl.error();
  const auto d = classify(*tl);
  EXPECT_FALSE(render_text(*tl, d).empty());
  EXPECT_FALSE(render_html(*tl, d).empty());
}

// Mutations of valid files (bytes flipped, cut, duplicated, digits replaced): each must give an
// error or a timeline the classifier and renderers get through. Runs in about a second or two.
TEST(TimelineReader, MutationFuzz) {
  Timeline tl;
  for (int i = 0; i < 40; ++i) tl.samples.push_back({i * 0.02, 1000000u + 4096u * i, 2000000u, {}, {}});
  tl.marks = {{0.1, "step 0", {}, {}, {}}, {0.3, "step 1", {}, {}, {}}};
  tl.messages = {"CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 1.00 GiB of which 1.00 MiB is free."};
  Header with_env;  // the header's command and optional env (issue 15)
  with_env.command = {"python3", "train_jax.py"};
  with_env.environment = {{"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}, {"TF_FORCE_GPU_ALLOW_GROWTH", "true"}};
  const std::string seeds[] = {write_timeline(tl, Header{}), kShared, write_timeline(tl, with_env)};
  std::mt19937 rng(42);
  const char alphabet[] = "0123456789-.,:[]{}\"e\n nulltrue";
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 30000; ++round) {
    const std::string text = fuzz::mutate_text(seeds[round % 3], rng, alphabet);
    auto r = read_timeline(text, "fuzz");
    if (!r.ok()) {
      ++rejected;
      EXPECT_FALSE(r.error().empty());
      continue;
    }
    ++accepted;
    const auto d = classify(*r);
    EXPECT_FALSE(diagnosis_json(*r, d).dump().empty());
    EXPECT_FALSE(render_html(*r, d).empty());
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

// Reports that ride along in the HTML page (trace call sites, Python lines) come last, escaped.
TEST(TimelineReader, HtmlAppendicesAreEscapedSections) {
  Timeline tl;
  for (int i = 0; i < 10; ++i) tl.samples.push_back({i * 0.1, 1000000u, 2000000u, {}, {}});
  const auto d = classify(tl);
  const std::string page = render_html(tl, d, nullptr, {{"python-lines", "Python lines", "job.py:12 <module> & co"}});
  const auto section = page.find("<section id='python-lines'><h2>Python lines</h2><pre>job.py:12 &lt;module&gt; &amp; co</pre>");
  ASSERT_NE(section, std::string::npos) << page;
  EXPECT_GT(section, page.find("What to do"));
  EXPECT_EQ(render_html(tl, d).find("<section"), std::string::npos);
}

TEST(TimelineReader, UnixTimesAreAccepted) {
  auto tl = read_timeline(R"({"columns": ["t", "process_used"], "samples": [[1764446400.00, 1], [1764446400.02, 2]]})", "epoch");
  ASSERT_TRUE(tl.ok()) << tl.error();
  EXPECT_FALSE(read_timeline(R"({"columns": ["t", "process_used"], "samples": [[1e12, 1]]})", "far").ok());
}

TEST(TimelineReader, StepNumbers) {
  EXPECT_EQ(*step_number("step 12"), 12);
  EXPECT_EQ(*step_number("Step: 3 loss=2.1"), 3);
  EXPECT_EQ(*step_number("iter 7"), 7);
  EXPECT_FALSE(step_number("epoch 1"));
  EXPECT_FALSE(step_number("oom"));
}

}  // namespace
}  // namespace vramdoc::timeline

namespace vramdoc::timeline {

// A timeline written by another tool or an older vramdoc may carry secrets: none survives reading.
TEST(TimelineReader, SecretsInAForeignTimelineAreRedactedWhenRead) {
  const std::string token = "hf_5URYX45jqRO25g3uK5kbAAegiuE8LCAnmu";
  const std::string text =
      "{\"vramdoc_timeline\": 1, \"name\": \"train.py --token=" + token + "\", \"columns\": [\"t\", \"process_used\"], "
      "\"command\": [\"python\", \"train.py\", \"--hub_token\", \"" + token + "\"], "
      "\"env\": {\"HF_TOKEN\": \"abc\", \"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\"}, \"interval_s\": 0.02}\n"
      "[0.0, 1]\n[0.1, 2]\n{\"t\": 0.1, \"mark\": \"step 1 " + token + "\"}\n"
      "{\"t\": 0.1, \"oom_message\": \"CUDA out of memory. Tried to allocate 2.00 MiB; token=" + token + "\"}\n";
  auto tl = read_timeline(text, "foreign.jsonl");
  ASSERT_TRUE(tl) << tl.error();
  EXPECT_EQ(tl->name, "train.py --token=***");
  EXPECT_EQ(tl->command, (std::vector<std::string>{"python", "train.py", "--hub_token", "***"}));
  EXPECT_EQ(tl->environment.at("HF_TOKEN"), "***");
  EXPECT_EQ(tl->environment.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  ASSERT_EQ(tl->marks.size(), 1U);
  EXPECT_EQ(tl->marks[0].label, "step 1 ***");
  ASSERT_EQ(tl->messages.size(), 1U);
  EXPECT_EQ(tl->messages[0], "CUDA out of memory. Tried to allocate 2.00 MiB; token=***");
}

}  // namespace vramdoc::timeline
