// The CUDA driver backend against the fake libcuda.so.1 built in tests/fakes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "backends/cuda_driver.hpp"

using vramdoc::backends::CudaDriver;

namespace {

void use_fake_cuda(const std::string& config) {
  std::string path = ::testing::TempDir() + "fake_cuda_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".conf";
  std::ofstream(path) << config;
  setenv("FAKE_CUDA_CONFIG", path.c_str(), 1);
  setenv("VRAMDOC_CUDA_LIBRARY", (std::string(VRAMDOC_FAKES_DIR) + "/cuda_basic/libcuda.so.1").c_str(), 1);
}

}  // namespace

TEST(CudaDriver, MissingLibraryIsAClearError) {
  setenv("VRAMDOC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  auto cuda = CudaDriver::open();
  ASSERT_FALSE(cuda.ok());
  EXPECT_NE(cuda.error().find("/nonexistent/libcuda.so.1 not found"), std::string::npos) << cuda.error();
}

TEST(CudaDriver, InitFailureSaysWhyInCudasWords) {
  use_fake_cuda("init_error=100\n");
  auto cuda = CudaDriver::open();
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.error(), "cuInit: no CUDA-capable device is detected (CUDA error 100)");
}

TEST(CudaDriver, OnChipFactsOfAnH200) {
  use_fake_cuda("devices=2\nbus=0x19\n");
  auto cuda = CudaDriver::open();
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  EXPECT_EQ((*cuda)->device_count(), 2);
  EXPECT_EQ((*cuda)->driver_version(), 13000);
  auto g = (*cuda)->device_info(1);
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(g->pci_bus_id, "0000:1a:00.0");
  EXPECT_EQ(g->sm_count, 132u);
  EXPECT_EQ(g->cc_major, 9);
  EXPECT_EQ(g->cc_minor, 0);
  EXPECT_EQ(g->l2_bytes, 52428800u);
  EXPECT_EQ(g->shared_per_block_bytes, 49152u);
  EXPECT_EQ(g->shared_per_block_optin_bytes, 232448u);
  EXPECT_EQ(g->shared_per_sm_bytes, 233472u);
  EXPECT_EQ(g->registers_per_sm, 65536u);
  EXPECT_EQ(g->max_threads_per_sm, 2048u);
  EXPECT_EQ(g->warp_size, 32u);
  EXPECT_EQ(g->max_mem_clock_mhz, 3201u);
  EXPECT_EQ(g->bus_width_bits, 6144u);
  EXPECT_EQ(g->memory_total_bytes, 150754820096u);
}

TEST(CudaDriver, ZeroAttributeIsUnknownNotZero) {
  use_fake_cuda("attr.13=0\nattr.36=0\n");  // CUDA 13 may report deprecated clocks as 0
  auto cuda = CudaDriver::open();
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  auto g = (*cuda)->device_info(0);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->max_mem_clock_mhz.has_value());
  EXPECT_FALSE(g->clock_rate_khz.has_value());
}

TEST(CudaDriver, NonexistentOrdinalIsAnError) {
  use_fake_cuda("devices=1\n");
  auto cuda = CudaDriver::open();
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  auto g = (*cuda)->device_info(3);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error(), "no CUDA device 3 (CUDA sees 1)");
}
