// The NVML backend against the fake libnvidia-ml.so.1 variants built in tests/fakes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backends/nvml.hpp"
#include "backends/nvml_api.hpp"

using vramdoc::backends::Nvml;
namespace api = vramdoc::backends::nvml_api;

namespace {

// Points the backend at a fake variant and writes its config; each test gets its own file.
void use_fake(const std::string& variant, const std::string& config) {
  std::string path = ::testing::TempDir() + "fake_nvml_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".conf";
  std::ofstream(path) << config;
  setenv("FAKE_NVML_CONFIG", path.c_str(), 1);
  std::string library = std::string(VRAMDOC_FAKES_DIR) + "/" + variant + "/libnvidia-ml.so.1";
  setenv("VRAMDOC_NVML_LIBRARY", library.c_str(), 1);
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST(NvmlApi, MemoryV2VersionWordIsSizeOrVersionTwo) {
  EXPECT_EQ(api::kMemoryV2Version, 0x02000028u);
  EXPECT_EQ(api::struct_version(40, 2), 0x02000028u);
  EXPECT_EQ(sizeof(api::ProcessInfoV1), 16u);
  EXPECT_EQ(sizeof(api::ProcessInfoV2), 24u);
  EXPECT_EQ(sizeof(api::ProcessInfoV3cc), 32u);
  EXPECT_EQ(sizeof(api::PciInfo), 68u);
  EXPECT_EQ(sizeof(api::ProcessUtilizationSample), 32u);
}

TEST(Nvml, MissingLibraryIsAClearError) {
  setenv("VRAMDOC_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  auto nvml = Nvml::open();
  ASSERT_FALSE(nvml.ok());
  EXPECT_NE(nvml.error().find("/nonexistent/libnvidia-ml.so.1 not found"), std::string::npos) << nvml.error();
}

TEST(Nvml, InitFailureNamesTheCallAndTheReason) {
  use_fake("nvml_full", "fail=nvmlInit_v2:9\n");
  auto nvml = Nvml::open();
  ASSERT_FALSE(nvml.ok());
  EXPECT_NE(nvml.error().find("nvmlInit_v2: Driver Not Loaded (NVML error 9)"), std::string::npos) << nvml.error();
}

TEST(Nvml, ModernDriverUsesMemoryV2WithTheVersionWord) {
  use_fake("nvml_full", "devices=2\ntotal=1000000\nused=300000\nreserved=50000\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  EXPECT_EQ((*nvml)->device_count(), 2u);
  EXPECT_TRUE(has((*nvml)->resolved_symbols(), "nvmlDeviceGetMemoryInfo_v2"));
  EXPECT_TRUE(has((*nvml)->resolved_symbols(), "nvmlDeviceGetComputeRunningProcesses_v3"));
  auto m = (*nvml)->memory(1);
  ASSERT_TRUE(m.ok()) << m.error();  // the fake answers "version mismatch" to a wrong word
  EXPECT_EQ(m->total_bytes, 1000000u);
  EXPECT_EQ(m->used_bytes, 300000u);
  EXPECT_EQ(m->reserved_bytes, 50000u);
  EXPECT_EQ(m->free_bytes, 650000u);
  auto d = (*nvml)->driver();
  EXPECT_EQ(d.driver_version, "580.95.05");
  EXPECT_EQ(d.cuda_driver_version, 13000);
  EXPECT_EQ(d.nvml_version, "13.580.95.05");
}

TEST(Nvml, OldDriverFallsBackToV1Symbols) {
  use_fake("nvml_old", "total=1000000\nused=300000\nreserved=50000\nprocesses=11:1000,22:2000\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto names = (*nvml)->resolved_symbols();
  EXPECT_TRUE(has(names, "nvmlInit"));
  EXPECT_TRUE(has(names, "nvmlDeviceGetMemoryInfo"));
  EXPECT_FALSE(has(names, "nvmlDeviceGetMemoryInfo_v2"));
  EXPECT_TRUE(has(names, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  auto m = (*nvml)->memory(0);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->used_bytes, 350000u);  // v1's used includes the reserved memory
  EXPECT_FALSE(m->reserved_bytes.has_value());
  auto p = (*nvml)->processes(0);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[1].pid, 22u);
  EXPECT_EQ((*p)[1].used_bytes, 2000u);
  auto s = (*nvml)->static_info(0);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->pci_bus_id, "0000:19:00.0");
  EXPECT_FALSE(s->bus_width_bits.has_value());  // unknown, not 0
  EXPECT_FALSE(s->pcie_gen_max.has_value());
  EXPECT_FALSE(s->nvlink_active_links.has_value());
  auto sample = (*nvml)->sample(0);
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->throttle_reasons, 0x4u);
  EXPECT_FALSE(sample->pcie_tx_bytes_per_s.has_value());
}

TEST(Nvml, Driver535ReadsTheLongerV3ProcessStruct) {
  use_fake("nvml_535", "processes=101:1111,202:2222,303:3333\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto p = (*nvml)->processes(0);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[2].pid, 303u);  // a wrong stride would read garbage here
  EXPECT_EQ((*p)[2].used_bytes, 3333u);
}

TEST(Nvml, ProcessMemoryNotAvailableIsUnknownAndTheBufferGrows) {
  std::string list = "processes=7:na";
  for (unsigned pid = 100; pid < 140; ++pid) list += "," + std::to_string(pid) + ":" + std::to_string(pid * 10);
  use_fake("nvml_full", list + "\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto p = (*nvml)->processes(0);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_EQ(p->size(), 41u);
  EXPECT_EQ((*p)[0].pid, 7u);
  EXPECT_FALSE((*p)[0].used_bytes.has_value());
  EXPECT_EQ((*p)[40].pid, 139u);
  EXPECT_EQ((*p)[40].used_bytes, 1390u);
}

TEST(Nvml, StaticInfoOfAnH200) {
  use_fake("nvml_full", "");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto s = (*nvml)->static_info(0);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->name, "NVIDIA H200");
  EXPECT_EQ(s->pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(s->pci_device_id, 0x233510DEu);
  EXPECT_EQ(s->cc_major, 9);
  EXPECT_EQ(s->memory_type, "HBM3e");
  EXPECT_EQ(s->bus_width_bits, 6144u);
  ASSERT_TRUE(s->theoretical_bandwidth_bytes_per_s.has_value());
  EXPECT_DOUBLE_EQ(*s->theoretical_bandwidth_bytes_per_s, 2.0 * 3201e6 * 6144 / 8);
  ASSERT_TRUE(s->pcie_bandwidth_bytes_per_s.has_value());
  EXPECT_NEAR(*s->pcie_bandwidth_bytes_per_s, 63.0e9, 0.05e9);
  EXPECT_EQ(s->nvlink_active_links, 18u);
  EXPECT_EQ(s->ecc_enabled, true);
  EXPECT_EQ(s->mig_enabled, false);
  EXPECT_EQ(s->compute_mode, "Default");
}

TEST(Nvml, NoNvlinkIsZeroLinks) {
  use_fake("nvml_full", "nvlinks=0\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  EXPECT_EQ((*nvml)->static_info(0)->nvlink_active_links, 0u);
}

TEST(Nvml, SampleHasEverythingAndPerProcessUtilisation) {
  use_fake("nvml_full", "processes=11:1000:55:9,22:2000\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto s = (*nvml)->sample(0);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->sm_util_percent, 37u);
  EXPECT_EQ(s->mem_util_percent, 12u);
  EXPECT_EQ(s->pcie_tx_bytes_per_s, 1000u * 1024u);
  EXPECT_EQ(s->pcie_rx_bytes_per_s, 2000u * 1024u);
  EXPECT_EQ(s->sm_clock_mhz, 1755u);
  EXPECT_DOUBLE_EQ(*s->power_watts, 123.456);
  EXPECT_DOUBLE_EQ(*s->power_limit_watts, 700.0);
  EXPECT_EQ(s->temperature_c, 41u);
  EXPECT_EQ(s->throttle_reasons, 0x4u);
  ASSERT_EQ(s->processes.size(), 2u);
  EXPECT_EQ(s->processes[0].sm_util_percent, 55u);
  EXPECT_EQ(s->processes[0].mem_util_percent, 9u);
  EXPECT_FALSE(s->processes[1].sm_util_percent.has_value());
}

TEST(Nvml, OneFailedQueryLeavesOnlyThatFieldEmpty) {
  use_fake("nvml_full", "fail=nvmlDeviceGetTemperature:3,nvmlDeviceGetMemoryBusWidth:4\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto s = (*nvml)->sample(0);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_FALSE(s->temperature_c.has_value());
  EXPECT_EQ(s->sm_util_percent, 37u);
  auto st = (*nvml)->static_info(0);
  EXPECT_FALSE(st->bus_width_bits.has_value());
  EXPECT_FALSE(st->theoretical_bandwidth_bytes_per_s.has_value());
}

TEST(Nvml, MemoryFailureIsAnErrorWithTheReason) {
  use_fake("nvml_full", "fail=nvmlDeviceGetMemoryInfo_v2:15\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto m = (*nvml)->memory(0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("nvmlDeviceGetMemoryInfo_v2: GPU is lost"), std::string::npos) << m.error();
  EXPECT_FALSE((*nvml)->sample(0).ok());
}

TEST(Nvml, NonexistentIndexIsAnError) {
  use_fake("nvml_full", "devices=1\n");
  auto nvml = Nvml::open();
  ASSERT_TRUE(nvml.ok()) << nvml.error();
  auto s = (*nvml)->static_info(5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "no GPU with index 5 (NVML sees 1)");
}
