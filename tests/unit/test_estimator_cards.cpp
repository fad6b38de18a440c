// The card table (issue 32, point 7): a name that fits cards of different sizes asks which,
// listing them, and the common cards newcomers own are known by vramdoc's and nvidia-smi's names.
#include <gtest/gtest.h>

#include "core/estimator/cards.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {
namespace {

// Regression: `--gpu A100` silently picked the 80 GB card (there is a 40 GB A100 as well).
TEST(Cards, ANameThatFitsCardsOfDifferentSizesAsksWhich) {
  auto a100 = find_gpu("A100");
  ASSERT_FALSE(a100.ok());
  EXPECT_EQ(a100.error(), "'A100' may mean cards of different sizes: A100 80GB SXM (80.0 GiB), A100 80GB PCIe (80.0 GiB), "
                          "A100 40GB SXM (40.0 GiB), A100 40GB PCIe (40.0 GiB); give one of these names, or --gpu-memory");
  auto v100 = find_gpu("v100");
  ASSERT_FALSE(v100.ok());
  EXPECT_NE(v100.error().find("V100 32GB (32.0 GiB), V100 16GB (16.0 GiB)"), std::string::npos) << v100.error();
  EXPECT_NE(find_gpu("a100 sxm").error().find("may mean"), std::string::npos);  // 80 or 40 GB, both SXM
  // A name of one size is still found: pieces of one card, or of cards of one size.
  EXPECT_EQ(find_gpu("A100 80GB")->name, "A100 80GB SXM");
  EXPECT_EQ(find_gpu("4070")->name, "RTX 4070");  // the 4070 and the 4070 Ti: both 12282 MiB
  EXPECT_EQ(find_gpu("4070")->usable_bytes, find_gpu("4070 Ti")->usable_bytes);
  EXPECT_EQ(find_gpu("H100")->name, "H100 SXM");  // the alias: the 94 GB card is always "H100 NVL"
  auto unknown = find_gpu("Voodoo 5");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(), "unknown card 'Voodoo 5' (see --list-gpus, or give --gpu-memory)");
}

// Regression: A40, RTX 4060, 4070 Ti and 2080 Ti were unknown.
TEST(Cards, CommonCardsByTheirNvidiaSmiNames) {
  const std::pair<const char*, std::uint64_t> kCards[] = {
      {"NVIDIA A40", 46068}, {"NVIDIA GeForce RTX 4060", 8188}, {"NVIDIA GeForce RTX 4070 Ti", 12282},
      {"NVIDIA GeForce RTX 2080 Ti", 11264}, {"NVIDIA H20", 97871}, {"NVIDIA L4", 23034}, {"NVIDIA L40S", 46068},
      {"NVIDIA GeForce RTX 3060", 12288}, {"NVIDIA GeForce RTX 4080", 16376}, {"NVIDIA GeForce RTX 5090", 32607}};
  for (const auto& [smi, mib] : kCards) {
    auto c = find_gpu(smi);
    ASSERT_TRUE(c.ok()) << smi << ": " << c.error();
    EXPECT_EQ(c->usable_bytes, mib * MiB) << smi;
  }
  EXPECT_EQ(find_gpu("RTX 4070 Ti")->name, "RTX 4070 Ti");
  EXPECT_EQ(find_gpu("2080ti")->name, "RTX 2080 Ti");
  EXPECT_EQ(find_gpu("a40")->name, "A40");
}

}  // namespace
}  // namespace vramdoc::estimator
