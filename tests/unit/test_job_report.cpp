// The job report (core/report): the sections it composes, where each goes in the text, the JSON
// and the HTML page, and the page of `vramdoc trace --html`.
#include <gtest/gtest.h>

#include "core/report/job_report.hpp"
#include "core/snapshot/model.hpp"
#include "core/snapshot/render.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/render.hpp"
#include "core/trace/overlay.hpp"

using namespace vramdoc;

namespace {

report::JobReport leak_report() {
  report::JobReport r;
  r.timeline.name = "train.py";
  for (int i = 0; i < 200; ++i) r.timeline.samples.push_back({i * 0.05, (100u + 4u * i) << 20, {}, {}, {}});
  r.diagnosis = timeline::classify(r.timeline);
  return r;
}

trace::ProcessTrace traced_process() {
  trace::ProcessTrace p;
  p.file = "dir/trace.7.vdt";
  p.pid = 7;
  p.start_unix_ns = 1'000'000'000;
  p.analysis.allocations = 3;
  p.analysis.live = 3;
  p.analysis.peak_bytes = p.analysis.live_bytes = 3 << 20;
  p.analysis.timeline = {{0.0, 1 << 20}, {1.0, 2 << 20}, {2.0, 3 << 20}};
  p.analysis.leaks = {{42, trace::MemKind::Device, 3, 3 << 20, 0.0, 2.0, 1, 3}};
  p.stacks[42] = {{0x1234, "train", 0x1000, "keep_one", "train.cu", 25}};
  return p;
}

trace::PythonStacks python_record() {
  trace::PythonStacks s;
  s.file = "dir/python.7.json";
  s.pid = 7;
  s.torch_version = "2.11";
  s.allocated_bytes = s.peak_allocated_bytes = 5 << 20;
  s.groups = {{0, 5 << 20, 5, {{"job.py", 7, "leak", false}}}};
  return s;
}

report::JobReport full_report() {
  auto r = leak_report();
  r.run = report::JobRun{3, "t.jsonl", false};
  r.call_sites = trace::TraceSet{{traced_process()}, {"dir/trace.8.vdt: not a vramdoc trace"}};
  r.traced = trace::build_overlay(r.call_sites->processes, r.timeline);
  r.python = trace::PythonStackSet{{python_record()}, {}};
  return r;
}

// A synthetic snapshot (tests/data/snapshots/make_synthetic.py): a loop that keeps 200 blocks.
snapshot::SnapshotReport leak_snapshot() {
  const std::string path = std::string(VRAMDOC_TEST_DATA_DIR) + "/snapshots/synthetic_leak.pickle";
  auto s = snapshot::read_snapshot_file(path);
  EXPECT_TRUE(s) << s.error();
  return s ? snapshot::analyze_snapshot(*s, path) : snapshot::SnapshotReport{};
}

std::size_t at(const std::string& text, const std::string& what, std::size_t from = 0) {
  const auto pos = text.find(what, from);
  EXPECT_NE(pos, std::string::npos) << "'" << what << "' not in:\n" << text;
  return pos;
}

}  // namespace

TEST(JobReport, WithoutSectionsTheTextIsTheDiagnosis) {
  const auto r = leak_report();
  EXPECT_EQ(report::render_text(r), timeline::render_text(r.timeline, r.diagnosis));
}

TEST(JobReport, TextSectionsComeInReportOrder) {
  const auto text = report::render_text(full_report());
  EXPECT_EQ(text.rfind("\nvramdoc run: the job exited with status 3; timeline: t.jsonl\n", 0), 0u) << text;
  // Unsampled: run said so when it started, and its verdict says why (issue 13): not a third time here.
  EXPECT_EQ(text.find("no GPU memory was sampled"), std::string::npos) << text;
  const auto diagnosis = at(text, "diagnosis of train.py");
  const auto traced = at(text, "Traced allocations (1 process)");
  const auto sites = at(text, "vramdoc trace: process 7 (dir/trace.7.vdt)");
  const auto site = at(text, "keep_one (train.cu:25)", sites);  // the overlay names it too
  const auto problem = at(text, "vramdoc trace: dir/trace.8.vdt: not a vramdoc trace");
  const auto python = at(text, "Python lines holding CUDA memory");
  const auto line = at(text, "job.py:7 leak");
  EXPECT_LT(diagnosis, traced);
  EXPECT_LT(traced, sites);
  EXPECT_LT(sites, site);
  EXPECT_LT(site, problem);
  EXPECT_LT(problem, python);
  EXPECT_LT(python, line);
}

TEST(JobReport, CallSitesSayWhyTheyAreMissing) {
  // No trace and no problem: the job made no allocation. Only problems: they are the reason.
  EXPECT_NE(report::render_call_sites_text({}).find("no trace files"), std::string::npos);
  const auto unreadable = report::render_call_sites_text({{}, {"cannot read the trace directory d: gone"}});
  EXPECT_EQ(unreadable.find("no trace files"), std::string::npos) << unreadable;
  EXPECT_NE(unreadable.find("vramdoc trace: cannot read the trace directory d: gone"), std::string::npos) << unreadable;
}

// The document's schema first (vramdoc.run/1 with run's section, else vramdoc.analyze/1), then
// the diagnosis's members and one key per section.
TEST(JobReport, JsonIsTheDiagnosisPlusOneKeyPerSection) {
  const auto plain = leak_report();
  auto doc = nlohmann::ordered_json::parse(report::render_json(plain));
  EXPECT_EQ(doc.begin().key(), "schema");
  EXPECT_EQ(doc["schema"], "vramdoc.analyze/1");
  doc.erase("schema");
  EXPECT_EQ(nlohmann::json(doc), timeline::diagnosis_json(plain.timeline, plain.diagnosis));

  const auto r = full_report();
  auto j = nlohmann::json::parse(report::render_json(r));
  EXPECT_EQ(j["run"], (nlohmann::json{{"timeline_file", "t.jsonl"}, {"sampled", false}, {"detached", nullptr}}));
  EXPECT_EQ(j["trace"], trace::overlay_json(*r.traced));
  EXPECT_EQ(j["call_sites"]["processes"][0]["pid"], 7);
  EXPECT_EQ(j["call_sites"]["processes"][0]["leaks"][0]["call_site"], "keep_one (train.cu:25)");
  EXPECT_EQ(j["call_sites"]["problems"][0], "dir/trace.8.vdt: not a vramdoc trace");
  EXPECT_EQ(j["python_stacks"]["processes"][0]["groups"][0]["call_site"], "job.py:7 leak");
  EXPECT_EQ(j["python_stacks"]["problems"], nlohmann::json::array());
  EXPECT_EQ(j["schema"], "vramdoc.run/1");
  for (const char* key : {"schema", "run", "trace", "call_sites", "python_stacks"}) j.erase(key);
  EXPECT_EQ(j, timeline::diagnosis_json(r.timeline, r.diagnosis));
}

TEST(JobReport, HtmlSectionsFollowTheDiagnosis) {
  const auto page = report::render_html(full_report());
  const auto remedies = at(page, "What to do");
  const auto sites = at(page, "<section id='call-sites'><h2>Call sites (allocation tracer)</h2><pre>");
  const auto python = at(page, "<section id='python-lines'><h2>Python lines (--trace-python)</h2><pre>");
  at(page, "<polyline class=\"mark traced\"");
  EXPECT_LT(remedies, sites);
  EXPECT_LT(sites, python);
  const auto plain = report::render_html(leak_report());
  EXPECT_EQ(plain.find("<section"), std::string::npos);
  EXPECT_EQ(plain.find("mark traced"), std::string::npos);
}

TEST(JobReport, TracePageChartsEachProcessAndEscapes) {
  const auto page = report::render_trace_page({{traced_process()}, {}}, "runs/<a&b>");
  at(page, "<title>vramdoc trace: runs/&lt;a&amp;b&gt;</title>");
  at(page, "<h2>Process 7: traced bytes over time</h2>");
  at(page, "<polyline class=\"mark traced\" fill=\"none\" stroke=\"#8e44ad\"");
  at(page, "<section id='call-sites'>");
  EXPECT_EQ(page.find("<a&b>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

TEST(JobReport, ASnapshotAloneLendsTheReportItsVerdict) {
  const auto r = report::report_of_snapshot(leak_snapshot());
  ASSERT_TRUE(r.snapshot);
  EXPECT_EQ(r.diagnosis.verdict, timeline::Verdict::Leak);
  EXPECT_FALSE(r.snapshot->diagnosis);  // shown once: as the report's
  const auto text = report::render_text(r);
  const auto diagnosis = at(text, "diagnosis of ");
  const auto section = at(text, "PyTorch memory snapshot: ");
  at(text, "the verdict's \"driver's number\" is the caching allocator's reserved bytes", section);
  at(text, "train.py:21 keep", section);
  EXPECT_LT(diagnosis, section);
  EXPECT_EQ(text.find("judged alone"), std::string::npos) << text;

  auto j = nlohmann::json::parse(report::render_json(r));
  EXPECT_EQ(j["verdict"], "leak");
  EXPECT_EQ(j["snapshot"]["schema"], snapshot::kSnapshotSchema);
  EXPECT_EQ(j["snapshot"]["alive"][0]["where"], "train.py:21 keep");
  EXPECT_FALSE(j["snapshot"].contains("own_verdict"));
  j.erase("snapshot");
  j.erase("schema");
  EXPECT_EQ(j, timeline::diagnosis_json(r.timeline, r.diagnosis));

  const auto page = report::render_html(r);
  const auto verdict = at(page, "data-verdict='leak'");
  const auto fragment = at(page, "<section id='snapshot'>");
  at(page, "<figure class=\"chart\" id=\"snapshot-stacked\">", fragment);
  EXPECT_LT(verdict, fragment);
  EXPECT_EQ(page.find("own-verdict"), std::string::npos);
}

TEST(JobReport, ASnapshotWithATimelineIsASectionWithItsOwnVerdict) {
  auto r = leak_report();
  r.snapshot = leak_snapshot();
  const auto text = report::render_text(r);
  const auto section = at(text, "PyTorch memory snapshot: ");
  at(text, "its allocator history, judged alone: leak", section);
  EXPECT_EQ(text.find("the verdict's \"driver's number\""), std::string::npos) << text;
  EXPECT_EQ(text.rfind(timeline::render_text(r.timeline, r.diagnosis), 0), 0u);  // the timeline's diagnosis first

  auto j = nlohmann::json::parse(report::render_json(r));
  EXPECT_EQ(j["snapshot"]["own_verdict"]["verdict"], "leak");
  j.erase("snapshot");
  j.erase("schema");
  EXPECT_EQ(j, timeline::diagnosis_json(r.timeline, r.diagnosis));
  at(report::render_html(r), "<p class='own-verdict' data-verdict='leak'>");
}

TEST(JobReport, TwoOomSnapshotsKeepTheirSectionIdsUnique) {
  auto r = leak_report();
  r.oom_snapshots = {leak_snapshot(), leak_snapshot()};
  const auto page = report::render_html(r);
  const auto first = at(page, "<section id='oom-snapshot'>");
  at(page, "<section id='oom-snapshot-2'>", first);
  for (const char* id : {"id='stacked'", "id='segments'", "id='snapshot'", "id='oom'"}) EXPECT_EQ(page.find(id), std::string::npos) << id;
}
