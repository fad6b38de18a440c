// GNU build-ids: the note walker the tracer runs on loaded images, and the file reader the
// symbolisation runs on disk; hostile notes and files give "none" or an error, never a crash.
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <random>

#include "core/trace/elf_file.hpp"
#include "core/trace/elf_note.hpp"

using namespace vramdoc::trace;

namespace {

void put32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

// One note: sizes, type, the name padded to 4, the descriptor padded to 4.
std::string note(std::uint32_t type, const std::string& name, const std::string& desc) {
  std::string s;
  put32(s, static_cast<std::uint32_t>(name.size()));
  put32(s, static_cast<std::uint32_t>(desc.size()));
  put32(s, type);
  s += name + std::string((4 - name.size() % 4) % 4, '\0');
  s += desc + std::string((4 - desc.size() % 4) % 4, '\0');
  return s;
}

std::optional<std::string> find(const std::string& notes) {
  const unsigned char* id = nullptr;
  std::size_t bytes = 0;
  if (!find_build_id(reinterpret_cast<const unsigned char*>(notes.data()), notes.size(), &id, &bytes)) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(id), bytes);
}

std::string self_image(std::size_t limit) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes(limit, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(limit));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace

TEST(ElfNotes, FindsTheGnuBuildIdAmongOtherNotes) {
  const std::string id = "0123456789abcdefghij";
  const std::string notes = note(1, std::string("GNU\0", 4), std::string(16, 'x')) + note(3, "Go\0", "not it") +
                            note(3, std::string("GNU\0", 4), id);
  EXPECT_EQ(find(notes), id);
  EXPECT_EQ(find(note(1, std::string("GNU\0", 4), id)), std::nullopt);  // ABI tag, not an id
}

TEST(ElfNotes, HostileNotesAreNotFound) {
  const std::string good = note(3, std::string("GNU\0", 4), "0123456789abcdefghij");
  for (std::size_t cut = 0; cut < good.size(); ++cut) EXPECT_EQ(find(good.substr(0, cut)), std::nullopt) << cut;
  std::string huge_name = good;
  std::uint32_t big = 0xFFFFFFFFu;
  std::memcpy(huge_name.data(), &big, 4);
  EXPECT_EQ(find(huge_name), std::nullopt);
  std::string huge_desc = good;
  std::memcpy(huge_desc.data() + 4, &big, 4);
  EXPECT_EQ(find(huge_desc), std::nullopt);
  EXPECT_EQ(find(note(3, std::string("GNU\0", 4), std::string(65, 'x'))), std::nullopt);  // over 64 bytes
  EXPECT_EQ(find(note(3, std::string("GNU\0", 4), "")), std::nullopt);
}

// The file on disk and the image in memory give the same id (both the toolchain's, 20 bytes).
TEST(ElfFile, ReadsTheSameIdAsTheLoadedImage) {
  auto on_disk = build_id_of_file("/proc/self/exe");
  ASSERT_TRUE(on_disk.ok()) << on_disk.error();
  if (!*on_disk) GTEST_SKIP() << "this build has no build-id (linked without --build-id)";
  std::string in_memory;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name && info->dlpi_name[0]) return 0;  // the main program only
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_NOTE) continue;
          const unsigned char* id = nullptr;
          std::size_t bytes = 0;
          if (find_build_id(reinterpret_cast<const unsigned char*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
                            info->dlpi_phdr[i].p_memsz, &id, &bytes))
            static_cast<std::string*>(out)->assign(reinterpret_cast<const char*>(id), bytes);
        }
        return 1;
      },
      &in_memory);
  EXPECT_EQ(**on_disk, in_memory);
  EXPECT_EQ(hex_bytes(**on_disk).size(), 2 * in_memory.size());
}

TEST(ElfFile, NotElfOrNotThereIsAnError) {
  auto missing = build_id_of_file("/nonexistent/lib.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("cannot open /nonexistent/lib.so"), std::string::npos);
  auto text = build_id_of_image("just some text, long enough to be read as a header if it were one.......");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().find("not an ELF file"), std::string::npos);
  std::string elf32 = self_image(4096);
  elf32[4] = 1;  // ELFCLASS32
  ASSERT_FALSE(build_id_of_image(elf32).ok());
  EXPECT_EQ(hex_bytes(std::string("\x00\x0f\xa0\xff", 4)), "000fa0ff");
}

// Every truncation and thousands of random byte flips of a real image: an id, none, or an error.
TEST(ElfFile, FuzzedImagesNeverCrash) {
  const std::string image = self_image(64 * 1024);
  ASSERT_GT(image.size(), 4096U);
  const auto whole = build_id_of_image(image);
  ASSERT_TRUE(whole.ok()) << whole.error();
  for (std::size_t cut = 0; cut < 4096; cut += 7) (void)build_id_of_image(image.substr(0, cut));
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = image.substr(0, 4096);
    for (int k = 0; k < 4; ++k) bytes[rng() % 1024] = static_cast<char>(rng());
    auto r = build_id_of_image(bytes);
    if (r.ok() && *r) {
      EXPECT_LE((*r)->size(), kMaxBuildIdBytes);
    }
  }
}
