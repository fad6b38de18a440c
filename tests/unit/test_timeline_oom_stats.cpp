// OOM message parsing for each framework, and the trend statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/timeline/oom_message.hpp"
#include "core/timeline/stats.hpp"

namespace vramdoc::timeline {
namespace {

constexpr double GiB = 1073741824.0;

TEST(TimelineOom, PyTorchNumbers) {
  const auto m = parse_oom_message(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 21.00 GiB. GPU 0 has a total capacity of 139.80 GiB "
      "of which 18.60 GiB is free. Including non-PyTorch memory, this process has 121.19 GiB memory in use. Of the allocated "
      "memory 112.68 GiB is allocated by PyTorch, and 7.73 GiB is reserved by PyTorch but unallocated.");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->framework, "pytorch");
  EXPECT_NEAR(double(*m->requested_bytes) / GiB, 21.00, 1e-9);
  EXPECT_NEAR(double(*m->capacity_bytes) / GiB, 139.80, 1e-9);
  EXPECT_NEAR(double(*m->free_bytes) / GiB, 18.60, 1e-9);
  EXPECT_NEAR(double(*m->in_use_bytes) / GiB, 121.19, 1e-9);
  EXPECT_NEAR(double(*m->allocated_bytes) / GiB, 112.68, 1e-9);
  EXPECT_NEAR(double(*m->reserved_unallocated_bytes) / GiB, 7.73, 1e-9);
  const auto small = parse_oom_message("CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 17.12 MiB is free.");
  ASSERT_TRUE(small);
  EXPECT_EQ(*small->requested_bytes, 20u * 1048576u);
  EXPECT_FALSE(small->reserved_unallocated_bytes);  // not stated: unknown, not 0
}

TEST(TimelineOom, TensorFlowJaxCuda) {
  auto tf = parse_oom_message("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8,1024,32000] and type float on /job:localhost");
  ASSERT_TRUE(tf);
  EXPECT_EQ(tf->framework, "tensorflow");
  EXPECT_EQ(*tf->requested_bytes, 8u * 1024u * 32000u * 4u);
  auto jax = parse_oom_message("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.");
  ASSERT_TRUE(jax);
  EXPECT_EQ(jax->framework, "jax");
  EXPECT_EQ(*jax->requested_bytes, 17179869184u);
  auto cuda = parse_oom_message("CUDA error: cudaErrorMemoryAllocation at kernel.cu:42");
  ASSERT_TRUE(cuda);
  EXPECT_EQ(cuda->framework, "cuda");
  EXPECT_TRUE(parse_oom_message("RuntimeError: CUDA error: out of memory"));
}

TEST(TimelineOom, OrdinaryLinesAreNotOom) {
  EXPECT_FALSE(parse_oom_message("step 12 loss 2.31 lr 1e-4"));
  EXPECT_FALSE(parse_oom_message("allocated 21.00 GiB of memory"));
  EXPECT_FALSE(parse_oom_message(""));
}

TEST(TimelineStats, TheilSenIgnoresOutliersAndSingleJumps) {
  std::vector<double> x, y;
  for (int i = 0; i < 50; ++i) x.push_back(i), y.push_back(3.0 * i + 7);
  y[10] = 1e9, y[30] = -1e9;
  EXPECT_NEAR(*theil_sen_slope(x, y), 3.0, 1e-9);
  std::vector<double> step(50, 0.0);
  for (int i = 30; i < 50; ++i) step[i] = 100;
  EXPECT_NEAR(*theil_sen_slope(x, step), 0.0, 1e-9);  // one jump is not a trend
  EXPECT_FALSE(theil_sen_slope({1, 1}, {2, 3}));
}

TEST(TimelineStats, MannKendall) {
  std::vector<double> up, flat(30, 5.0), noise;
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 1);
  for (int i = 0; i < 30; ++i) up.push_back(i + n(rng) * 0.1), noise.push_back(n(rng));
  EXPECT_GT(mann_kendall(up).z, 3.09);
  EXPECT_EQ(mann_kendall(flat).z, 0.0);
  EXPECT_LT(std::fabs(mann_kendall(noise).z), 3.09);
  std::vector<double> down(up.rbegin(), up.rend());
  EXPECT_LT(mann_kendall(down).z, -3.09);
}

TEST(TimelineStats, PeriodOfASawtooth) {
  std::vector<double> y;
  for (int i = 0; i < 300; ++i) y.push_back((i % 7) * 10.0 + (i % 7 == 3 ? 25 : 0));
  auto p = find_period(y);
  ASSERT_TRUE(p);
  EXPECT_NEAR(*p, 7.0, 0.5);
  EXPECT_FALSE(find_period(std::vector<double>(100, 1.0)));
}

}  // namespace
}  // namespace vramdoc::timeline
