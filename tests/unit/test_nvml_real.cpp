// The NVML backend against the real driver: run by tests/gpu/nvml_real.sh on a GPU machine
// (VRAMDOC_REAL_NVML=1); skipped everywhere else.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backends/nvml.hpp"

using vramdoc::backends::Nvml;

namespace {

std::shared_ptr<Nvml> real_nvml() {
  unsetenv("VRAMDOC_NVML_LIBRARY");
  auto nvml = Nvml::open();
  EXPECT_TRUE(nvml.ok()) << nvml.error();
  return nvml.ok() ? *nvml : nullptr;
}

}  // namespace

TEST(NvmlReal, MemoryStaticInfoAndSample) {
  if (!std::getenv("VRAMDOC_REAL_NVML")) GTEST_SKIP() << "set VRAMDOC_REAL_NVML=1 on a GPU machine";
  auto nvml = real_nvml();
  ASSERT_TRUE(nvml);
  ASSERT_GT(nvml->device_count(), 0u);
  for (const auto& name : nvml->resolved_symbols()) std::printf("resolved %s\n", name.c_str());
  auto m = nvml->memory(0);
  ASSERT_TRUE(m.ok()) << m.error();
  ASSERT_TRUE(m->total_bytes && m->used_bytes && m->free_bytes && m->reserved_bytes) << "a current driver has memory v2";
  EXPECT_EQ(*m->used_bytes + *m->free_bytes + *m->reserved_bytes, *m->total_bytes);
  auto s = nvml->static_info(0);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(s->name && s->uuid && s->pci_bus_id && s->bus_width_bits && s->max_mem_clock_mhz);
  auto sample = nvml->sample(0);
  ASSERT_TRUE(sample.ok()) << sample.error();
  EXPECT_TRUE(sample->sm_util_percent.has_value());
  EXPECT_TRUE(sample->temperature_c.has_value());
  EXPECT_TRUE(sample->power_watts.has_value());
  EXPECT_TRUE(sample->sm_clock_mhz.has_value());
  EXPECT_TRUE(sample->throttle_reasons.has_value());
  EXPECT_TRUE(sample->pcie_tx_bytes_per_s.has_value());
  std::printf("sample: sm %u%% mem %u%% %.1f W %u C, %zu processes\n", sample->sm_util_percent.value_or(999),
              sample->mem_util_percent.value_or(999), sample->power_watts.value_or(-1), sample->temperature_c.value_or(999),
              sample->processes.size());
}

TEST(NvmlReal, ProcessListHasTheHolder) {
  const char* pid_text = std::getenv("VRAMDOC_HOLDER_PID");
  if (!std::getenv("VRAMDOC_REAL_NVML") || !pid_text) GTEST_SKIP() << "needs VRAMDOC_REAL_NVML=1 and a holder process";
  auto nvml = real_nvml();
  ASSERT_TRUE(nvml);
  auto p = nvml->processes(0);
  ASSERT_TRUE(p.ok()) << p.error();
  bool found = false;
  for (const auto& proc : *p) {
    std::printf("process %u: %s bytes\n", proc.pid, proc.used_bytes ? std::to_string(*proc.used_bytes).c_str() : "n/a");
    if (proc.pid == static_cast<unsigned>(std::atoi(pid_text))) {
      found = true;
      ASSERT_TRUE(proc.used_bytes.has_value());
      EXPECT_GE(*proc.used_bytes, 1ULL << 30);  // the holder's 1 GiB plus its context
    }
  }
  EXPECT_TRUE(found) << "pid " << pid_text << " not in NVML's list (a PID namespace would explain it)";
}
