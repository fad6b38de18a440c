// Derived facts: theoretical bandwidths, the memory-type table, PCI bus ids.
#include <gtest/gtest.h>

#include "core/info/derived.hpp"

using namespace vramdoc;

TEST(InfoDerived, MemoryBandwidthIsTwoTransfersPerClockTimesBusWidth) {
  // RTX 4090: NVML max memory clock 10501 MHz, 384 bit -> 1008 GB/s, NVIDIA's figure.
  EXPECT_NEAR(*info::memory_bandwidth_bytes_per_s(10501u, 384u), 1008.1e9, 0.1e9);
  // H100 SXM: 2619 MHz, 5120 bit -> 3.35 TB/s.
  EXPECT_NEAR(*info::memory_bandwidth_bytes_per_s(2619u, 5120u), 3.352e12, 0.001e12);
  EXPECT_FALSE(info::memory_bandwidth_bytes_per_s(std::nullopt, 384u).has_value());
  EXPECT_FALSE(info::memory_bandwidth_bytes_per_s(10501u, 0u).has_value());
}

TEST(InfoDerived, PcieBandwidthPerDirection) {
  EXPECT_NEAR(*info::pcie_bandwidth_bytes_per_s(5u, 16u), 63.015e9, 0.001e9);
  EXPECT_NEAR(*info::pcie_bandwidth_bytes_per_s(4u, 16u), 31.508e9, 0.001e9);
  EXPECT_NEAR(*info::pcie_bandwidth_bytes_per_s(3u, 16u), 15.754e9, 0.001e9);
  EXPECT_NEAR(*info::pcie_bandwidth_bytes_per_s(2u, 16u), 8.0e9, 0.001e9);
  EXPECT_NEAR(*info::pcie_bandwidth_bytes_per_s(5u, 8u), 31.508e9, 0.001e9);
  EXPECT_NEAR(*info::pcie_bandwidth_bytes_per_s(6u, 16u), 121.0e9, 0.001e9);
  EXPECT_FALSE(info::pcie_bandwidth_bytes_per_s(7u, 16u).has_value());
  EXPECT_FALSE(info::pcie_bandwidth_bytes_per_s(5u, std::nullopt).has_value());
}

TEST(InfoDerived, MemoryTypeByDeviceIdThenName) {
  auto h200 = info::memory_type_for(0x233510DEu, std::nullopt);
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(h200->type, "HBM3e");
  EXPECT_EQ(h200->source, "pci device id");
  auto a100 = info::memory_type_for(0x99990000u | 0x10DEu, std::string("NVIDIA A100-SXM4-80GB"));
  ASSERT_TRUE(a100.has_value());
  EXPECT_EQ(a100->type, "HBM2e");
  EXPECT_EQ(a100->source, "name");
  EXPECT_EQ(info::memory_type_for(std::nullopt, std::string("NVIDIA A100-PCIE-40GB"))->type, "HBM2");
  EXPECT_EQ(info::memory_type_for(std::nullopt, std::string("NVIDIA L40S"))->type, "GDDR6");
  EXPECT_FALSE(info::memory_type_for(0x12345678u, std::string("Mystery GPU")).has_value());
}

TEST(InfoDerived, PciBusIdsOfNvmlAndCudaCompareEqual) {
  auto nvml = info::parse_pci_bus_id("00000000:19:00.0");
  auto cuda = info::parse_pci_bus_id("0000:19:00.0");
  ASSERT_TRUE(nvml && cuda);
  EXPECT_EQ(*nvml, *cuda);
  EXPECT_EQ(nvml->bus, 0x19u);
  EXPECT_NE(*nvml, *info::parse_pci_bus_id("0000:1a:00.0"));
  EXPECT_FALSE(info::parse_pci_bus_id("nonsense").has_value());
  EXPECT_FALSE(info::parse_pci_bus_id("0000:19:00.0 trailing").has_value());
}
