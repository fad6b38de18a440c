// The info renderers on fixed reports: golden text, and JSON with nulls for unknowns.
#include <gtest/gtest.h>


#include "core/info/derived.hpp"
#include "core/info/report.hpp"
#include "golden.hpp"

using namespace vramdoc;

namespace {

// An H200 as NVML and the CUDA driver describe it, on a fixed host.
info::InfoReport h200_report() {
  info::InfoReport r;
  r.host.cpu_model = "AMD EPYC 9654 96-Core Processor";
  r.host.logical_cpus = 192;
  r.host.ram_total_bytes = 2ULL * 1024 * 1024 * 1024 * 1024;
  r.host.ram_available_bytes = 1900ULL * 1024 * 1024 * 1024;
  r.driver = {"580.95.05", 13000, "13.580.95.05"};
  GpuStatic g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  g.pci_bus_id = "00000000:19:00.0";
  g.pci_device_id = 0x233510DE;
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sm_count = 132;
  g.max_sm_clock_mhz = 1980;
  g.bus_width_bits = 6144;
  g.max_mem_clock_mhz = 3201;
  g.memory_total_bytes = 150754820096ULL;
  g.ecc_enabled = true;
  g.mig_enabled = false;
  g.persistence_mode = true;
  g.compute_mode = "Default";
  g.l2_bytes = 52428800;
  g.shared_per_block_bytes = 49152;
  g.shared_per_block_optin_bytes = 232448;
  g.shared_per_sm_bytes = 233472;
  g.registers_per_sm = 65536;
  g.registers_per_block = 65536;
  g.max_threads_per_sm = 2048;
  g.warp_size = 32;
  g.pcie_gen_current = 5;
  g.pcie_gen_max = 5;
  g.pcie_width_current = 16;
  g.pcie_width_max = 16;
  g.nvlink_active_links = 18;
  info::fill_derived(g);
  GpuMemory m{150754820096ULL, 4194304000ULL, 145994481664ULL, 566034432ULL};
  r.gpus.push_back({g, m});
  return r;
}

}  // namespace

TEST(InfoRender, H200TextMatchesGolden) {
  vramdoc::test::expect_golden("info/render-h200.txt", info::render_info_text(h200_report()));
}

TEST(InfoRender, NoDriverTextIsTheHostAndOneLine) {
  info::InfoReport r = h200_report();
  r.gpus.clear();
  r.problems = {"no GPU information: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"};
  EXPECT_EQ(info::render_info_text(r),
            "Host: AMD EPYC 9654 96-Core Processor (192 logical CPUs), RAM 2.0 TiB (1.9 TiB available)\n"
            "no GPU information: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)\n");
}

TEST(InfoRender, UnknownsReadNaInTextAndNullInJson) {
  info::InfoReport r;
  GpuStatic g;
  g.index = 3;
  r.gpus.push_back({g, std::nullopt});
  std::string text = info::render_info_text(r);
  EXPECT_NE(text.find("GPU 3: name n/a"), std::string::npos) << text;
  EXPECT_NE(text.find("L2 cache                 n/a"), std::string::npos) << text;
  EXPECT_EQ(text.find(" 0 SMs"), std::string::npos) << text;
  auto j = info::info_to_json(r);
  const auto& gpu = j["gpus"][0];
  EXPECT_EQ(gpu["index"], 3);
  EXPECT_TRUE(gpu["name"].is_null());
  EXPECT_TRUE(gpu["memory"].is_null());
  EXPECT_TRUE(gpu["on_chip"]["l2_bytes"].is_null());
  EXPECT_TRUE(gpu["device_memory"]["theoretical_bandwidth_bytes_per_s"].is_null());
  EXPECT_TRUE(gpu["host_link"]["nvlink_active_links"].is_null());
  EXPECT_TRUE(j["host"]["ram_bandwidth_bytes_per_s"].is_null());
}

TEST(InfoRender, JsonCarriesEveryField) {
  auto j = info::info_to_json(h200_report());
  const auto& gpu = j["gpus"][0];
  EXPECT_EQ(gpu["pci_device_id"], "0x233510DE");
  EXPECT_EQ(gpu["compute_capability"], "9.0");
  EXPECT_EQ(gpu["memory"]["reserved_bytes"], 566034432ULL);
  EXPECT_EQ(gpu["device_memory"]["type"], "HBM3e");
  EXPECT_EQ(gpu["device_memory"]["type_source"], "pci device id");
  EXPECT_DOUBLE_EQ(gpu["device_memory"]["theoretical_bandwidth_bytes_per_s"].get<double>(), 2.0 * 3201e6 * 6144 / 8);
  EXPECT_EQ(gpu["on_chip"]["max_registers_per_thread"], 255);
  EXPECT_EQ(gpu["on_chip"]["l1_shared_per_sm_bytes"], 256 * 1024);
  EXPECT_EQ(gpu["host_link"]["pcie_gen_max"], 5);
  EXPECT_EQ(j["driver"]["cuda_driver_version"], 13000);
  EXPECT_EQ(j["problems"].size(), 0u);
  // No field anywhere is 0 when unknown: every leaf of this fully known report is set.
  std::function<void(const nlohmann::ordered_json&, const std::string&)> no_nulls = [&](const auto& node, const std::string& path) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) no_nulls(it.value(), path + "." + it.key());
    } else if (node.is_array()) {
      for (std::size_t i = 0; i < node.size(); ++i) no_nulls(node[i], path + "[" + std::to_string(i) + "]");
    } else if (path != ".host.ram_bandwidth_bytes_per_s") {
      EXPECT_FALSE(node.is_null()) << path;
    }
  };
  no_nulls(j, "");
}
