// dcgm-exporter's names, units and labels (`watch --serve --metrics`), and vramdoc_up.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/watch/dcgm.hpp"
#include "core/watch/prometheus.hpp"
#include "watch_fixture.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

namespace {

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

const std::string kGpu0 =
    "{gpu=\"0\",UUID=\"GPU-00000000\",pci_bus_id=\"00000000:10:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H200\"";

}  // namespace

TEST(WatchDcgm, NamesUnitsAndLabelsOfDcgmExporter) {
  auto snap = fixture::two_gpus(false);
  const std::string text = render_dcgm_metrics(snap, "node-7");
  const std::string labels = kGpu0 + ",Hostname=\"node-7\"}";
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_FB_USED" + labels + " 40960\n")) << text;  // MiB
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_FB_FREE" + labels + " 102400\n"));
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_FB_RESERVED" + labels + " 512\n"));
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_GPU_UTIL" + labels + " 40\n"));  // percent
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_MEM_COPY_UTIL" + labels + " 95\n"));
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_SM_CLOCK" + labels + " 1980\n"));  // MHz
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_MEM_CLOCK" + labels + " 2619\n"));
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_GPU_TEMP" + labels + " 45\n"));
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_POWER_USAGE" + labels + " 310.5\n"));  // W
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT" + labels + " 976562\n"));  // KB/s: 1e9 / 1024, down
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT" + labels + " 1953125\n"));
  EXPECT_TRUE(has(text, "# TYPE DCGM_FI_DEV_FB_USED gauge\n"));
  // GPU 1 reported only its total: no DCGM sample is made up for it.
  EXPECT_FALSE(has(text, "device=\"nvidia1\"")) << text;
}

TEST(WatchDcgm, MibRoundDownAndNoHostnameLabelWhenUnknown) {
  auto snap = fixture::two_gpus(false);
  snap.gpus[0].sample->memory.used_bytes = 40 * GiB + GiB / 1024 - 1;  // one byte short of 40961 MiB
  const std::string text = render_dcgm_metrics(snap, "");
  EXPECT_TRUE(has(text, "DCGM_FI_DEV_FB_USED" + kGpu0 + "} 40960\n")) << text;
  EXPECT_FALSE(has(text, "Hostname"));
}

TEST(WatchDcgm, FailedGpuHasNoDcgmSamples) {
  const std::string text = render_dcgm_metrics(fixture::two_gpus(true), "n");
  EXPECT_TRUE(has(text, "device=\"nvidia0\""));
  EXPECT_FALSE(has(text, "device=\"nvidia1\""));
}

TEST(WatchDcgm, MetricSetsParseAndSelectTheFamilies) {
  auto both = parse_metric_sets("vramdoc,dcgm");
  ASSERT_TRUE(both);
  EXPECT_TRUE(both->vramdoc && both->dcgm);
  auto dcgm = parse_metric_sets("dcgm");
  ASSERT_TRUE(dcgm);
  EXPECT_TRUE(dcgm->dcgm && !dcgm->vramdoc);
  for (const char* bad : {"", "dcgm,dcgm", "vramdoc,", ",dcgm", "DCGM", "prometheus", "vramdoc dcgm"})
    EXPECT_FALSE(parse_metric_sets(bad)) << "'" << bad << "'";

  const auto snap = fixture::two_gpus(false);
  ExportOptions only_dcgm;
  only_dcgm.metrics = *dcgm;
  const std::string d = render_metrics(snap, ExpositionFormat::Prometheus, only_dcgm);
  EXPECT_TRUE(has(d, "DCGM_FI_DEV_FB_USED{"));
  EXPECT_FALSE(has(d, "vramdoc_gpu_"));
  EXPECT_FALSE(has(d, "vramdoc_process_"));
  EXPECT_TRUE(has(d, "\nvramdoc_up 1\n"));
  ExportOptions only_vramdoc;
  only_vramdoc.metrics = *parse_metric_sets("vramdoc");
  const std::string v = render_metrics(snap, ExpositionFormat::Prometheus, only_vramdoc);
  EXPECT_FALSE(has(v, "DCGM_"));
  EXPECT_TRUE(has(v, "vramdoc_process_memory_used_bytes{"));
}

// A supervised exporter must not crash-loop: without a driver it serves vramdoc_up 0 and nothing
// made up; with every GPU failing it is down too; one GPU answering is enough to be up.
TEST(WatchDcgm, VramdocUpSaysWhetherTheDriverWasRead) {
  Snapshot no_driver;
  no_driver.driver_error = "libnvidia-ml.so.1: cannot open shared object file";
  const std::string text = render_metrics(no_driver);
  EXPECT_TRUE(has(text, "# TYPE vramdoc_up gauge\nvramdoc_up 0\n")) << text;
  EXPECT_FALSE(has(text, "DCGM_"));
  EXPECT_FALSE(has(text, "vramdoc_gpu_"));

  auto all_failed = fixture::two_gpus(true);
  all_failed.gpus.erase(all_failed.gpus.begin());
  EXPECT_TRUE(has(render_metrics(all_failed), "\nvramdoc_up 0\n"));
  EXPECT_TRUE(has(render_metrics(fixture::two_gpus(true)), "\nvramdoc_up 1\n"));
}

TEST(WatchDcgm, ProcessInfoCarriesPodAndNamespace) {
  auto snap = fixture::two_gpus(false);
  snap.gpus[0].processes[0].details.pod_uid = "5e1a7c3d-0b2f-4a6e-9d8c-1f2e3d4c5b6a";
  snap.gpus[0].processes[0].details.pod_namespace = "ml-team";
  const std::string text = render_metrics(snap);
  EXPECT_TRUE(has(text, "pod_uid=\"5e1a7c3d-0b2f-4a6e-9d8c-1f2e3d4c5b6a\",namespace=\"ml-team\"}")) << text;
}

// The Grafana dashboard and the alert rules in deploy/ query only metrics the exporter writes (with
// every value known, both sets on).
TEST(WatchDcgm, DashboardAndAlertRulesQueryOnlyExportedMetrics) {
  auto snap = fixture::two_gpus(false);
  snap.gpus[0].processes[0].gpu.sm_util_percent = 30;
  snap.gpus[0].processes[0].gpu.mem_util_percent = 20;
  const std::string text = render_metrics(snap, ExpositionFormat::Prometheus, {}, 0);
  const std::regex metric("(vramdoc|DCGM)_[A-Za-z0-9_]+");
  for (const char* file : {"/deploy/grafana/vramdoc.json", "/deploy/prometheus/vramdoc-alerts.yml"}) {
    std::ifstream in(std::string(VRAMDOC_SOURCE_DIR) + file);
    ASSERT_TRUE(in) << file;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string queries = ss.str();
    std::set<std::string> names;
    for (std::sregex_iterator it(queries.begin(), queries.end(), metric), end; it != end; ++it) names.insert(it->str());
    EXPECT_GT(names.size(), 3U) << file;
    for (const auto& name : names)
      EXPECT_TRUE(has(text, "\n" + name + "{") || has(text, "\n" + name + " ")) << file << " queries " << name;
  }
}
