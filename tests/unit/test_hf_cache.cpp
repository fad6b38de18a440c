// Model ids resolved from the local Hugging Face cache (no network): the cache's layout, the
// environment's order of precedence, and the message when a model is not cached.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "core/estimator/hf_cache.hpp"

using namespace vramdoc::estimator;
namespace fs = std::filesystem;

namespace {

struct TempCache {
  fs::path root = fs::temp_directory_path() / ("vramdoc-hf-" + std::to_string(::getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempCache() { fs::create_directories(root); }
  ~TempCache() {
    std::error_code ec;
    fs::remove_all(root, ec);
    unsetenv("HF_HUB_CACHE"), unsetenv("HF_HOME"), unsetenv("HUGGINGFACE_HUB_CACHE");
  }
  fs::path snapshot(const fs::path& hub, const std::string& folder, const std::string& rev) {
    const fs::path dir = hub / folder / "snapshots" / rev;
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << "{}";
    return dir;
  }
};

}  // namespace

TEST(HfCache, ModelIdShape) {
  EXPECT_TRUE(looks_like_model_id("meta-llama/Llama-3.1-8B"));
  EXPECT_TRUE(looks_like_model_id("Qwen/Qwen2.5-0.5B"));
  EXPECT_FALSE(looks_like_model_id("llama-3-8b"));            // a preset
  EXPECT_FALSE(looks_like_model_id("configs/llama.json/x"));  // two slashes: a path
  EXPECT_FALSE(looks_like_model_id("/abs/path"));
  EXPECT_FALSE(looks_like_model_id("org/"));
  EXPECT_FALSE(looks_like_model_id("../etc"));
  EXPECT_FALSE(looks_like_model_id("org/na me"));
}

TEST(HfCache, RefsMainPicksTheRevision) {
  TempCache c;
  const fs::path hub = c.root / "home" / "hub";
  c.snapshot(hub, "models--meta-llama--Llama-3.1-8B", "aaaa");
  const fs::path want = c.snapshot(hub, "models--meta-llama--Llama-3.1-8B", "bbbb");
  fs::create_directories(hub / "models--meta-llama--Llama-3.1-8B" / "refs");
  std::ofstream(hub / "models--meta-llama--Llama-3.1-8B" / "refs" / "main") << "bbbb\n";
  setenv("HF_HOME", (c.root / "home").c_str(), 1);
  auto dir = find_cached_model("meta-llama/Llama-3.1-8B");
  ASSERT_TRUE(dir.ok()) << dir.error();
  EXPECT_EQ(fs::path(*dir), want);
}

TEST(HfCache, HubCacheVariableWinsOverHfHome) {
  TempCache c;
  const fs::path want = c.snapshot(c.root / "hubcache", "models--org--name", "cccc");
  c.snapshot(c.root / "home" / "hub", "models--org--name", "dddd");
  setenv("HF_HOME", (c.root / "home").c_str(), 1);
  setenv("HF_HUB_CACHE", (c.root / "hubcache").c_str(), 1);
  auto dir = find_cached_model("org/name");
  ASSERT_TRUE(dir.ok()) << dir.error();
  EXPECT_EQ(fs::path(*dir), want);
}

TEST(HfCache, NotCachedSaysWhereAndHow) {
  TempCache c;
  setenv("HF_HUB_CACHE", c.root.c_str(), 1);
  auto dir = find_cached_model("org/missing");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().find("not in the local Hugging Face cache"), std::string::npos) << dir.error();
  EXPECT_NE(dir.error().find("models--org--missing"), std::string::npos) << dir.error();
  EXPECT_NE(dir.error().find("huggingface-cli download org/missing"), std::string::npos) << dir.error();
}

TEST(HfCache, SnapshotWithoutConfigIsSkipped) {
  TempCache c;
  fs::create_directories(c.root / "models--org--name" / "snapshots" / "empty");
  setenv("HF_HUB_CACHE", c.root.c_str(), 1);
  EXPECT_FALSE(find_cached_model("org/name").ok());
}

// Regression (issue 25): refs/main was read without a cap or a type check: a FIFO there hung the
// estimate, /dev/zero grew without end. Such a refs/main names no revision: the newest snapshot is taken.
TEST(HfCache, ARefsMainThatIsAFifoOrDevZeroIsNoRevision) {
  TempCache c;
  const fs::path hub = c.root / "home" / "hub";
  const fs::path repo = hub / "models--org--name";
  const fs::path want = c.snapshot(hub, "models--org--name", "eeee");
  fs::create_directories(repo / "refs");
  setenv("HF_HOME", (c.root / "home").c_str(), 1);
  ASSERT_EQ(::mkfifo((repo / "refs" / "main").c_str(), 0600), 0);
  auto dir = find_cached_model("org/name");
  ASSERT_TRUE(dir.ok()) << dir.error();
  EXPECT_EQ(fs::path(*dir), want);
  fs::remove(repo / "refs" / "main");
  fs::create_symlink("/dev/zero", repo / "refs" / "main");
  dir = find_cached_model("org/name");
  ASSERT_TRUE(dir.ok()) << dir.error();
  EXPECT_EQ(fs::path(*dir), want);
}
