// Issue 13's hostile and careless inputs, below the CLI: the bounded reader (FIFOs, /dev/zero,
// directories, symlink loops, size caps), sizes without a unit, durations that would overflow,
// huge numbers in GiB columns, NaN in timelines, the card table's nvidia-smi names, and the
// mutation fuzz of the config and timeline readers through the files a user gives.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/estimator/cards.hpp"
#include "core/estimator/model_source.hpp"
#include "core/input_file.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/writer.hpp"
#include "core/units.hpp"
#include "mutate_text.hpp"

namespace vramdoc {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("vramdoc-hostile-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Regression: analyze /dev/zero read forever and grew past 8 GB.
// The refusal comes from the file's type, before a byte is read.
TEST(InputFile, CharacterDeviceIsRefusedAtOnce) {
  auto r = read_input_file("/dev/zero", GiB);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.error(), "/dev/zero is a character device")) << r.error();
  EXPECT_FALSE(read_file_head("/dev/zero", 8).ok());
}

// Regression: a FIFO nobody writes hung the reader (opening it waits for a writer).
TEST(InputFile, FifoIsRefusedWithoutOpeningIt) {
  TempDir dir;
  const std::string fifo = (dir.path / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = read_input_file(fifo, GiB);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.error(), "is a FIFO")) << r.error();
  auto head = read_file_head(fifo, 8);
  ASSERT_FALSE(head.ok());
}

// Regression: a symlink loop was "internal error: filesystem error", exit 1.
TEST(InputFile, SymlinkLoopNamesTheFile) {
  TempDir dir;
  const fs::path loop = dir.path / "LOOP";
  fs::create_symlink(loop, loop);
  auto r = read_input_file(loop.string(), MiB);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.error(), loop.string())) << r.error();
  EXPECT_TRUE(mentions(r.error(), "symbolic links")) << r.error();
  auto model = estimator::load_model(loop.string(), "");
  ASSERT_FALSE(model.ok());
  EXPECT_TRUE(mentions(model.error(), loop.string())) << model.error();
}

TEST(InputFile, DirectoryAndSizeCap) {
  TempDir dir;
  auto d = read_input_file(dir.path.string(), MiB);
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(mentions(d.error(), "is a directory")) << d.error();
  const std::string big = dir.file("big", std::string(5000, 'x'));
  auto r = read_input_file(big, 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.error(), "larger than 4.00 KiB")) << r.error();
  EXPECT_EQ(read_input_file(big, 5000).value().size(), 5000U);
  EXPECT_EQ(read_file_head(big, 8).value(), "xxxxxxxx");
  EXPECT_EQ(read_file_head(big, 9000).value().size(), 5000U);
  EXPECT_EQ(input_name("-"), "standard input");
}

// Regression: --gpu-memory 24 was 24 bytes ("DOES NOT FIT on 0.00 GiB").
TEST(Units, MemorySizeNeedsAUnitAndMoreThanZero) {
  auto bare = parse_memory_size("24");
  ASSERT_FALSE(bare.ok());
  EXPECT_TRUE(mentions(bare.error(), "no unit")) << bare.error();
  EXPECT_TRUE(mentions(bare.error(), "24GiB")) << bare.error();
  EXPECT_FALSE(parse_memory_size("0").ok());
  EXPECT_FALSE(parse_memory_size("0GiB").ok());
  EXPECT_EQ(*parse_memory_size("24GiB"), 24 * GiB);
  EXPECT_EQ(*parse_memory_size("80GB"), 80'000'000'000ULL);
}

// Regression: watch --interval 5000000h overflowed std::chrono's nanoseconds: no wait at all.
TEST(Units, DurationsAboveTheMaximumAreRefused) {
  EXPECT_FALSE(parse_duration("5000000h").ok());
  EXPECT_FALSE(parse_duration("101d").ok());
  EXPECT_FALSE(parse_duration(std::string(400, '9') + "s").ok());
  EXPECT_DOUBLE_EQ(*parse_duration("100d"), kMaxDurationSeconds);
  EXPECT_DOUBLE_EQ(*parse_duration("2h"), 7200.0);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(kMaxDurationSeconds));
  EXPECT_GT(ns.count(), 0);  // the largest accepted duration still fits the clock's integer
}

// Regression: "5584716796.88 GiB".
TEST(Units, GibColumnsSwitchUnitForHugeNumbers) {
  EXPECT_EQ(format_gib(3 * GiB / 2), "1.50");
  EXPECT_EQ(format_gib(1023 * GiB), "1023.00");
  EXPECT_EQ(format_gib(1024 * GiB), "1.00 TiB");
  EXPECT_EQ(format_gib(5584716796ULL * GiB), "5.20 EiB");
  EXPECT_EQ(format_gib(3ULL << 50), "3.00 PiB");
  EXPECT_EQ(format_gib_unit(GiB / 2), "0.50 GiB");
  EXPECT_EQ(format_gib_unit(3ULL << 40), "3.00 TiB");  // never "3.00 TiB GiB"
}

// Regression: "NVIDIA GeForce RTX 4090" (what nvidia-smi prints) was refused.
TEST(Cards, NvidiaSmiNamesAreMatched) {
  const std::pair<const char*, const char*> kNames[] = {
      {"NVIDIA GeForce RTX 4090", "RTX 4090"},   {"NVIDIA H100 80GB HBM3", "H100 SXM"},
      {"NVIDIA A100-SXM4-80GB", "A100 80GB SXM"}, {"NVIDIA A100-SXM4-40GB", "A100 40GB SXM"},
      {"NVIDIA A100-PCIE-40GB", "A100 40GB PCIe"}, {"NVIDIA A100 80GB PCIe", "A100 80GB PCIe"},
      {"NVIDIA H200", "H200"},                   {"NVIDIA H100 PCIe", "H100 PCIe"},
      {"NVIDIA H100 NVL", "H100 NVL"},           {"NVIDIA B200", "B200"},
      {"NVIDIA GB200", "GB200"},                 {"NVIDIA A10G", "A10G"},
      {"NVIDIA A10", "A10"},                     {"NVIDIA L4", "L4"},
      {"NVIDIA L40S", "L40S"},                   {"NVIDIA GeForce RTX 3080", "RTX 3080"},
      {"NVIDIA GeForce RTX 3090", "RTX 3090"},   {"NVIDIA GeForce RTX 4070", "RTX 4070"},
      {"NVIDIA GeForce RTX 4080", "RTX 4080"},   {"NVIDIA GeForce RTX 5090", "RTX 5090"},
      {"NVIDIA RTX A6000", "A6000"},             {"Tesla T4", "T4"},
      {"Tesla V100-SXM2-32GB", "V100 32GB"},     {"AMD Instinct MI300X", "MI300X"},
  };
  for (const auto& [smi, card] : kNames) {
    auto c = estimator::find_gpu(smi);
    ASSERT_TRUE(c.ok()) << smi;
    EXPECT_EQ(c->name, card) << smi;
  }
  // Short names keep working: exact names and aliases first, then the cards containing the text.
  EXPECT_EQ(estimator::find_gpu("H100")->name, "H100 SXM");
  EXPECT_EQ(estimator::find_gpu("a100-40gb")->name, "A100 40GB SXM");
  EXPECT_EQ(estimator::find_gpu("4090")->name, "RTX 4090");
  EXPECT_EQ(estimator::find_gpu("b200")->name, "B200");
  EXPECT_FALSE(estimator::find_gpu("Voodoo 5").ok());
  EXPECT_FALSE(estimator::find_gpu("NVIDIA").ok());
}

TEST(Cards, TableIsLargestFirstAndNamesAreUnique) {
  const auto cards = estimator::gpu_cards();
  for (std::size_t i = 1; i < cards.size(); ++i) EXPECT_GE(cards[i - 1].usable_bytes, cards[i].usable_bytes) << cards[i].name;
  for (const auto& c : cards) {
    EXPECT_EQ(estimator::find_gpu(c.name)->name, c.name);  // each card is found by its own name
    if (!c.smi_name.empty()) {
      EXPECT_EQ(estimator::find_gpu(c.smi_name)->name, c.name);
    }
    EXPECT_GE(c.usable_bytes, 7 * GiB);  // the smallest, the RTX 4060: 8188 MiB
  }
  EXPECT_EQ(estimator::find_gpu("MI300X")->vendor, estimator::Vendor::Amd);
}

// Regression: NaN in a timeline was "line N is not JSON".
TEST(TimelineReader, NanAndInfinityKeepTheLineNumber) {
  auto lines = timeline::read_timeline(
      "{\"vramdoc_timeline\": 1, \"columns\": [\"t\", \"process_used\"]}\n[0, 1]\n[0.1, NaN]\n[0.2, 3]\n", "nan.jsonl");
  ASSERT_FALSE(lines.ok());
  EXPECT_TRUE(mentions(lines.error(), "nan.jsonl: line 3: NaN is not a number of bytes")) << lines.error();
  auto shared = timeline::read_timeline("{\"columns\": [\"t\", \"process_used\"],\n \"samples\": [[0, 1],\n [1, Infinity]]}",
                                        "inf.json");
  ASSERT_FALSE(shared.ok());
  EXPECT_TRUE(mentions(shared.error(), "inf.json: line 3: Infinity is not a number of bytes")) << shared.error();
  auto in_string = timeline::read_timeline("{\"name\": \"NaN\", \"samples\": [[0, 1], [1, 2]], oops}", "s.json");
  ASSERT_FALSE(in_string.ok());
  EXPECT_FALSE(mentions(in_string.error(), "NaN is not")) << in_string.error();
}

// The config reader again, through the file a user names (bounded reader + parser): every
// mutation is an error naming the file or a model the estimator sizes; never a crash.
TEST(HostileInput, ConfigFilesMutationFuzz) {
  TempDir dir;
  std::ifstream in(std::string(VRAMDOC_TEST_DATA_DIR) + "/estimator/configs/llama-160m.json");
  const std::string seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(seed.empty());
  std::mt19937 rng(1313);
  int parsed = 0, refused = 0;
  for (int round = 0; round < 400; ++round) {
    const std::string path = dir.file("config.json", fuzz::mutate_text(seed, rng, "0123456789-.,:[]{}\"e NaNInfinity"));
    auto model = estimator::load_model(path, "");
    if (!model) {
      ++refused;
      EXPECT_TRUE(mentions(model.error(), "config.json")) << model.error();
      continue;
    }
    ++parsed;
    (void)estimator::estimate(*model, estimator::Options{});
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(refused, 0);
}

// The timeline reader again, through files, with NaN and Infinity among the mutations: a version 1
// recording and the head of a version 2 one (two ranks on an H200 pair, tests/data/README.md),
// each judged process by process as `analyze` does.
TEST(HostileInput, TimelineFilesMutationFuzz) {
  TempDir dir;
  timeline::Timeline tl;
  for (int i = 0; i < 30; ++i) tl.samples.push_back({i * 0.02, 1000000u + 4096u * i, 2000000u, {}, {}});
  std::string v2;
  std::ifstream in(std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/h200_two_ranks_leak.jsonl");
  for (std::string line; v2.size() < 6000 && std::getline(in, line);) v2 += line + "\n";
  ASSERT_NE(v2.find("\"series\""), std::string::npos);
  std::mt19937 rng(1314);
  for (const std::string& seed : {timeline::write_timeline(tl, timeline::Header{}), v2}) {
    int accepted = 0, refused = 0;
    for (int round = 0; round < 600; ++round) {
      const std::string path = dir.file("t.jsonl", fuzz::mutate_text(seed, rng, "0123456789-.,:[]{}\"e\n NaNInfinitynull"));
      auto r = timeline::read_timeline_file(path);
      if (!r) {
        ++refused;
        EXPECT_TRUE(mentions(r.error(), path)) << r.error();
        continue;
      }
      ++accepted;
      auto judged = timeline::judge_job({*r});
      EXPECT_FALSE(timeline::diagnosis_json(judged.headline, judged.diagnosis).empty());
    }
    EXPECT_GT(accepted, 0);
    EXPECT_GT(refused, 0);
  }
}

}  // namespace
}  // namespace vramdoc
