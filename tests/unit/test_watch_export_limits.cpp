// What the exporter publishes (the executable by default, the redacted command line on request)
// and how much: label values capped and valid UTF-8, process series capped, the rest counted.
#include <gtest/gtest.h>

#include "core/watch/prometheus.hpp"
#include "watch_fixture.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// GPU 0 with `n` processes, process i using i MiB (PIDs 1000 + i).
Snapshot many_processes(std::uint32_t n, std::uint32_t first_pid = 1000) {
  Snapshot snap = fixture::two_gpus(false);
  auto& procs = snap.gpus[0].processes;
  procs.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    ProcessView p;
    p.gpu = {first_pid + i, 0, std::uint64_t{i} << 20, std::nullopt, std::nullopt};
    p.details.executable = "python";
    procs.push_back(p);
  }
  return snap;
}

}  // namespace

TEST(WatchExport, ExecutableByDefaultCommandOnlyWhenAsked) {
  const auto snap = fixture::two_gpus();
  const std::string plain = render_metrics(snap);
  EXPECT_NE(plain.find("vramdoc_process_info{gpu=\"0\",uuid=\"GPU-00000000\",pid=\"1234\",user=\"alice\","
                       "executable=\"python\",container=\"0123456789ab\",pod_uid=\"\",namespace=\"\"} 1\n"),
            std::string::npos)
      << plain;
  EXPECT_EQ(plain.find("command="), std::string::npos);
  EXPECT_EQ(plain.find("train.py"), std::string::npos);
  const std::string with = render_metrics(snap, ExpositionFormat::Prometheus, fixture::with_command());
  EXPECT_NE(with.find("executable=\"python\",command=\"python train.py --lr 0.1\""), std::string::npos) << with;
}

TEST(WatchExport, LabelValuesAreCutValidUtf8WithoutControlCharacters) {
  EXPECT_EQ(label_value("plain"), "plain");
  // The one terminal sanitiser (core/terminal_safe.hpp): visible escapes, the exporter's and the views' alike.
  EXPECT_EQ(label_value("bad \xff\xfe end"), "bad \\xff\\xfe end");
  EXPECT_EQ(label_value("tab\there\r\x01\n"), "tab\\there\\r\\x01\\n");
  EXPECT_EQ(label_value("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
  EXPECT_EQ(label_value(std::string(300, 'a')).size(), kMaxLabelBytes);
  EXPECT_TRUE(label_value(std::string(300, 'a')).ends_with("..."));
  // "é" is two bytes: a cut never splits it.
  std::string accents;
  for (int i = 0; i < 200; ++i) accents += "\xc3\xa9";
  const std::string cut = label_value(accents, 10);
  EXPECT_EQ(cut, "\xc3\xa9\xc3\xa9\xc3\xa9...");
  auto snap = fixture::two_gpus();
  snap.gpus[0].processes[0].details.command = "python " + std::string(1000, 'x');
  const std::string text = render_metrics(snap, ExpositionFormat::Prometheus, fixture::with_command());
  const auto at = text.find("command=\"python x");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(text.find('"', at + 9) - (at + 9), kMaxLabelBytes);
}

TEST(WatchExport, AForkBombCannotGrowTheSeriesBeyondTheCap) {
  ExportOptions options;
  options.max_processes = 100;
  const std::string text = render_metrics(many_processes(5000), ExpositionFormat::Prometheus, options, 4900);
  EXPECT_EQ(count(text, "\nvramdoc_process_info{"), 100U);
  EXPECT_EQ(count(text, "\nvramdoc_process_memory_used_bytes{"), 100U);
  // The largest users of memory are kept: PIDs 5900..5999; 5899 is not.
  EXPECT_NE(text.find("pid=\"5999\""), std::string::npos);
  EXPECT_EQ(text.find("pid=\"5899\""), std::string::npos);
  EXPECT_NE(text.find("\nvramdoc_exporter_processes_omitted 4900\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE vramdoc_exporter_processes_dropped_total counter\n"
                      "vramdoc_exporter_processes_dropped_total 4900\n"),
            std::string::npos)
      << text;
  const std::string om = render_metrics(many_processes(5000), ExpositionFormat::OpenMetrics, options, 4900);
  EXPECT_NE(om.find("# TYPE vramdoc_exporter_processes_dropped counter\n"), std::string::npos);
}

TEST(WatchExport, DroppedProcessesCountsEachOnceWhileLeftOut) {
  DroppedProcesses dropped;
  EXPECT_EQ(dropped.update(many_processes(10), 10), 0U);
  EXPECT_EQ(dropped.update(many_processes(15), 10), 5U);   // PIDs 1000..1004 left out
  EXPECT_EQ(dropped.update(many_processes(15), 10), 5U);   // the same five: not again
  EXPECT_EQ(dropped.update(many_processes(15, 2000), 10), 10U);  // five new PIDs left out
  EXPECT_EQ(dropped.update(many_processes(3), 10), 10U);   // nothing left out
  EXPECT_EQ(exported_processes(many_processes(15), 0).size(), 0U);
}
