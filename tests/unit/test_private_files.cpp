// Files and folders vramdoc creates for the user: private, new, never through a planted link
// or in a folder another user could write (docs/security.md, "Files vramdoc writes").
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backends/private_files.hpp"

using namespace vramdoc;
using namespace vramdoc::backends;
namespace fs = std::filesystem;

namespace {

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("vramdoc-private-" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST(PrivateFiles, CreatesFoldersForTheUserOnly) {
  TempDir t;
  auto made = ensure_private_directory((t.path / "a/b.trace").string());
  ASSERT_TRUE(made) << made.error();
  EXPECT_EQ(mode_of(t.path / "a/b.trace"), 0700U);
  EXPECT_TRUE(ensure_private_directory((t.path / "a/b.trace").string()));  // ours already: fine
  fs::create_directory(t.path / "plain");
  chmod((t.path / "plain").c_str(), 0755);
  EXPECT_TRUE(ensure_private_directory((t.path / "plain").string()));  // others may read, not write
}

TEST(PrivateFiles, RefusesFoldersOthersCouldPlantIn) {
  TempDir t;
  fs::create_directory(t.path / "shared");
  chmod((t.path / "shared").c_str(), 01777);
  auto shared = ensure_private_directory((t.path / "shared").string());
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().find("writable by group or others"), std::string::npos);
  fs::create_directory(t.path / "group");
  chmod((t.path / "group").c_str(), 0770);
  EXPECT_FALSE(ensure_private_directory((t.path / "group").string()));
  fs::create_directory_symlink(t.path / "group", t.path / "link");
  auto link = ensure_private_directory((t.path / "link").string());
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().find("symbolic link"), std::string::npos);
  std::ofstream(t.path / "file") << "x";
  EXPECT_FALSE(ensure_private_directory((t.path / "file").string()));
}

TEST(PrivateFiles, TempFoldersAndNewFiles) {
  TempDir t;
  auto a = make_private_temp_directory(t.path.string(), "python-hook");
  auto b = make_private_temp_directory(t.path.string(), "python-hook");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(mode_of(*a), 0700U);
  EXPECT_EQ(fs::path(*a).filename().string().rfind("python-hook-", 0), 0U);
  const fs::path file = fs::path(*a) / "sitecustomize.py";
  ASSERT_TRUE(write_new_private_file(file.string(), "print(1)\n"));
  EXPECT_EQ(mode_of(file), 0600U);
  EXPECT_FALSE(write_new_private_file(file.string(), "planted\n"));  // never over an existing file
  // A link planted at the name: neither written through nor truncated through.
  std::ofstream(t.path / "victim") << "keep";
  fs::create_symlink(t.path / "victim", t.path / "planted");
  auto exclusive = open_private_file((t.path / "planted").string(), true);
  auto truncating = open_private_file((t.path / "planted").string(), false);
  EXPECT_FALSE(exclusive);
  ASSERT_FALSE(truncating);
  EXPECT_NE(truncating.error().find("symbolic link"), std::string::npos);
  std::ifstream victim(t.path / "victim");
  std::string text;
  victim >> text;
  EXPECT_EQ(text, "keep");
}
