#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "core/watch/prometheus.hpp"
#include "core/watch/render.hpp"
#include "watch_fixture.hpp"
#include "golden.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

namespace {

// Splits one CSV line into cells, honouring RFC 4180 quotes.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.emplace_back();
    else cells.back() += c;
  }
  return cells;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(WatchRender, OnceTextMatchesGolden) { vramdoc::test::expect_golden("watch/render-two-gpus.txt", render_text(fixture::two_gpus())); }

TEST(WatchRender, JsonUnknownIsNullAndFailedGpuCarriesError) {
  auto j = to_json(fixture::two_gpus());
  ASSERT_EQ(j["gpus"].size(), 2U);
  EXPECT_EQ(j["gpus"][0]["memory"]["used_bytes"], 40 * GiB);
  EXPECT_EQ(j["gpus"][0]["throttle_reasons"].size(), 0U);
  EXPECT_EQ(j["gpus"][0]["hints"][0]["kind"], "bandwidth_bound");
  EXPECT_TRUE(j["gpus"][0]["processes"][0]["sm_util_percent"].is_null());
  EXPECT_EQ(j["gpus"][1]["error"], "NVML: GPU is lost");
  EXPECT_FALSE(j["gpus"][1].contains("memory"));
  auto idle = to_json(fixture::two_gpus(false));
  EXPECT_TRUE(idle["gpus"][1]["memory"]["used_bytes"].is_null());
}

TEST(WatchRender, JsonlLineIsOneLineAndSurvivesInvalidUtf8) {
  auto snap = fixture::two_gpus();
  snap.gpus[0].processes[0].details.command = std::string("bad \xff\xfe bytes\nsecond line");
  std::string line = render_jsonl_line(snap);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto parsed = nlohmann::ordered_json::parse(line, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded());
}

TEST(WatchRender, CsvRowsHaveTheHeaderColumnsAndEscapeCommands) {
  auto snap = fixture::two_gpus();
  snap.gpus[0].processes[1].details.command = "python -c \"a, b\"";
  std::size_t columns = csv_cells(lines_of(csv_header())[0]).size();
  auto rows = lines_of(render_csv_rows(snap));
  ASSERT_EQ(rows.size(), 4U);  // gpu 0, its two processes, failed gpu 1
  for (const auto& row : rows) EXPECT_EQ(csv_cells(row).size(), columns) << row;
  auto gpu0 = csv_cells(rows[0]);
  EXPECT_EQ(gpu0[1], "gpu");
  EXPECT_EQ(gpu0[5], std::to_string(40 * GiB));
  EXPECT_EQ(gpu0[16], "none");
  EXPECT_EQ(csv_cells(rows[2])[18], "python -c \"a, b\"");
  auto failed = csv_cells(rows[3]);
  EXPECT_EQ(failed[5], "");  // unknown is an empty cell, not 0
  EXPECT_EQ(failed.back(), "NVML: GPU is lost");
}

// Another user's command line ends up in a spreadsheet when the --log CSV is opened: a cell that
// starts like a formula (=, +, -, @) is made text with a leading apostrophe (OWASP's CSV injection rule).
TEST(WatchRender, CsvCellsThatLookLikeFormulasAreText) {
  auto snap = fixture::two_gpus();
  snap.gpus[0].processes[0].details.command = "=HYPERLINK(\"http://x\",\"y\")";
  snap.gpus[0].processes[1].details.command = "@SUM(A1)";
  auto rows = lines_of(render_csv_rows(snap));
  ASSERT_EQ(rows.size(), 4U);
  EXPECT_EQ(csv_cells(rows[1])[18], "'=HYPERLINK(\"http://x\",\"y\")");
  EXPECT_EQ(csv_cells(rows[2])[18], "'@SUM(A1)");
  EXPECT_EQ(csv_cells(rows[0])[5], std::to_string(40 * GiB));  // numbers are never touched
}

TEST(WatchPrometheus, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(WatchPrometheus, KnownValuesLabelledAndUnknownOmitted) {
  std::string text = render_metrics(fixture::two_gpus(false));
  EXPECT_NE(text.find("vramdoc_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000\"} 42949672960\n"), std::string::npos);
  EXPECT_NE(text.find("vramdoc_gpu_sm_utilization_ratio{gpu=\"0\",uuid=\"GPU-00000000\"} 0.4\n"), std::string::npos);
  EXPECT_NE(text.find("vramdoc_gpu_memory_total_bytes{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("vramdoc_gpu_memory_used_bytes{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("vramdoc_gpu_sm_utilization_ratio{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("vramdoc_gpu_bandwidth_bound{gpu=\"1\""), std::string::npos);
  EXPECT_NE(text.find("vramdoc_gpu_bandwidth_bound{gpu=\"0\",uuid=\"GPU-00000000\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("vramdoc_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000\",pid=\"1234\"} 32212254720\n"),
            std::string::npos);
  EXPECT_EQ(text.find("vramdoc_process_sm_utilization_ratio"), std::string::npos);  // never reported
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
}

TEST(WatchPrometheus, FailedGpuIsDownWithoutValues) {
  std::string text = render_metrics(fixture::two_gpus(true));
  EXPECT_NE(text.find("vramdoc_gpu_up{gpu=\"1\",uuid=\"GPU-00000001\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("vramdoc_gpu_up{gpu=\"0\",uuid=\"GPU-00000000\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("{gpu=\"1\",uuid=\"GPU-00000001\"} 0\nvramdoc_gpu_memory"), std::string::npos);
  EXPECT_EQ(text.find("vramdoc_gpu_temperature_celsius{gpu=\"1\""), std::string::npos);
}

TEST(WatchPrometheus, EachFamilyHasOneHelpOneTypeAndContiguousSamples) {
  std::string text = render_metrics(fixture::two_gpus(false), ExpositionFormat::OpenMetrics);
  std::map<std::string, int> help, type;
  std::map<std::string, bool> closed;
  std::string current;
  for (const auto& line : lines_of(text)) {
    if (line.rfind("# HELP ", 0) == 0) ++help[line.substr(7, line.find(' ', 7) - 7)];
    if (line.rfind("# TYPE ", 0) == 0) ++type[line.substr(7, line.find(' ', 7) - 7)];
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    if (!help.count(name) && name.ends_with("_total")) name.resize(name.size() - 6);  // an OpenMetrics counter's family
    if (name != current) {
      EXPECT_FALSE(closed[name]) << name << " samples are split";
      if (!current.empty()) closed[current] = true;
      current = name;
    }
    EXPECT_EQ(help[name], 1) << name;
    EXPECT_EQ(type[name], 1) << name;
  }
  EXPECT_GT(help.size(), 15U);
  EXPECT_EQ(lines_of(text).back(), "# EOF");
  EXPECT_EQ(metrics_content_type(ExpositionFormat::Prometheus), "text/plain; version=0.0.4; charset=utf-8");
}

TEST(WatchPrometheus, CommandWithQuotesAndNewlineStaysOneSampleLine) {
  auto snap = fixture::two_gpus();
  snap.gpus[0].processes[0].details.command = "sh -c \"echo \\ hi\"\nrm";
  std::string text = render_metrics(snap, ExpositionFormat::Prometheus, fixture::with_command());
  // The newline reaches the value as the sanitiser's visible "\n" (core/terminal_safe.hpp), escaped.
  EXPECT_NE(text.find("command=\"sh -c \\\"echo \\\\ hi\\\"\\\\nrm\""), std::string::npos) << text;
}
