// The watch sampler against the fake NVML: two cadences, and a device failing mid-run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "backends/watch/sampler.hpp"

using namespace vramdoc;

namespace {

struct FakeNvml {
  std::string lost_flag;
  std::shared_ptr<backends::Nvml> nvml;
  // Two GPUs; once `lost_flag` exists, the `fail` queries fail (on the devices `extra` says).
  explicit FakeNvml(const std::string& fail, const std::string& extra = "") {
    std::string base = ::testing::TempDir() + "watch_sampler_" + std::to_string(getpid()) + "_" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
    lost_flag = base + ".lost";
    std::remove(lost_flag.c_str());
    std::ofstream(base + ".conf") << "devices=2\nutil_gpu=37\nprocesses=" << getpid() << ":1048576:11:22\nfail=" << fail
                                  << "\nfail_when_exists=" << lost_flag << "\n"
                                  << extra;
    setenv("FAKE_NVML_CONFIG", (base + ".conf").c_str(), 1);
    setenv("VRAMDOC_NVML_LIBRARY", VRAMDOC_FAKES_DIR "/nvml_full/libnvidia-ml.so.1", 1);
    auto opened = backends::Nvml::open();
    EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error());
    nvml = *opened;
  }
  ~FakeNvml() { std::remove(lost_flag.c_str()); }
  void lose() { std::ofstream(lost_flag) << "x"; }
};

}  // namespace

TEST(WatchSampler, SlowFieldsCarriedBetweenFullSamplesThenRefreshed) {
  FakeNvml fake("nvmlDeviceGetUtilizationRates:15,nvmlDeviceGetProcessUtilization:15");
  backends::WatchSampler sampler(fake.nvml, {0, 1}, 0.2);
  auto first = sampler.sample();  // full
  ASSERT_TRUE(first.gpus[0].sample.has_value());
  EXPECT_EQ(first.gpus[0].sample->sm_util_percent, 37U);
  ASSERT_EQ(first.gpus[0].processes.size(), 1U);
  EXPECT_EQ(first.gpus[0].processes[0].gpu.sm_util_percent, 11U);
  EXPECT_TRUE(first.gpus[0].processes[0].details.command.has_value());  // this test binary, from /proc
  fake.lose();  // utilisation queries fail from now on
  auto quick = sampler.sample();  // memory and processes only: utilisation carried, not re-read
  EXPECT_EQ(quick.gpus[0].sample->sm_util_percent, 37U);
  EXPECT_EQ(quick.gpus[0].processes[0].gpu.sm_util_percent, 11U);
  EXPECT_EQ(quick.gpus[0].sample->memory.used_bytes, first.gpus[0].sample->memory.used_bytes);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  auto refreshed = sampler.sample();  // full again: the failed query leaves the field unknown
  ASSERT_TRUE(refreshed.gpus[0].sample.has_value());
  EXPECT_FALSE(refreshed.gpus[0].sample->sm_util_percent.has_value());
}

TEST(WatchSampler, DeviceLostMidRunOnBothCadencesOthersGoOn) {
  FakeNvml fake("nvmlDeviceGetMemoryInfo_v2:15", "fail_device=1\n");
  backends::WatchSampler sampler(fake.nvml, {0, 1}, 0.2);
  auto before = sampler.sample();
  EXPECT_TRUE(before.gpus[1].sample.has_value());
  fake.lose();  // GPU 1's memory query fails now: it reports so, GPU 0 goes on
  for (int i = 0; i < 2; ++i) {  // a quick sample, then (after the period) a full one
    auto after = sampler.sample();
    ASSERT_EQ(after.gpus.size(), 2U);
    EXPECT_TRUE(after.gpus[0].sample.has_value());
    EXPECT_FALSE(after.gpus[1].sample.has_value());
    ASSERT_TRUE(after.gpus[1].error.has_value());
    EXPECT_NE(after.gpus[1].error->find("GPU is lost"), std::string::npos) << *after.gpus[1].error;
    EXPECT_EQ(after.gpus[1].info.name, "NVIDIA H200");  // identity stays known
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}
