// The streaming pickle reader (src/core/snapshot/pickle*.cpp) against Python's own pickles:
// every protocol from 2 to 5, both of Python's picklers (tests/data/pickle/make_corpus.py), the
// opcodes it must refuse, and its limits.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/snapshot/pickle.hpp"
#include "pickle_dump.hpp"

using vramdoc::snapshot::PickleLimits;
using vramdoc::snapshot::read_pickle;
using vramdoc::test::DumpHandler;

namespace {

std::string unhex(const std::string& h) {
  std::string s;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) s += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return s;
}

struct Outcome {
  bool ok = false;
  std::string text;  // the rendering, or the error
};

Outcome read(const std::string& bytes, const PickleLimits& limits = {}) {
  std::istringstream in(bytes);
  DumpHandler h;
  auto r = read_pickle(in, h, limits);
  if (!r) return {false, r.error()};
  return {true, h.text()};
}

nlohmann::json corpus() {
  std::ifstream f(std::string(VRAMDOC_TEST_UNPACKED_DIR) + "/pickle/corpus.json");  // tests/CMakeLists.txt unpacks it
  if (!f) throw std::runtime_error("pickle corpus missing: re-run cmake (it unpacks tests/data/pickle/corpus.json.tar.xz)");
  return nlohmann::json::parse(f);
}

}  // namespace

TEST(PickleReader, ReadsEveryCorpusPickleAsPythonDoes) {
  std::size_t read_ok = 0;
  for (const auto& c : corpus()) {
    if (c.contains("error")) continue;
    const std::string what = c["name"].get<std::string>() + " protocol " + std::to_string(c["protocol"].get<int>()) + " " +
                             c["pickler"].get<std::string>();
    const Outcome o = read(unhex(c["hex"]));
    ASSERT_TRUE(o.ok) << what << ": " << o.text;
    EXPECT_EQ(o.text, c["expected"].get<std::string>()) << what;
    ++read_ok;
  }
  EXPECT_GE(read_ok, 200u);
}

TEST(PickleReader, RefusesCodeSetsAndSelfReferenceNamingTheByte) {
  for (const auto& c : corpus()) {
    if (!c.contains("error")) continue;
    const Outcome o = read(unhex(c["hex"]));
    EXPECT_FALSE(o.ok) << c["name"];
    EXPECT_NE(o.text.find(c["error"].get<std::string>()), std::string::npos) << c["name"] << ": " << o.text;
    EXPECT_NE(o.text.find("at byte "), std::string::npos) << o.text;
  }
}

TEST(PickleReader, NamesEachOpcodeThatWouldRunCode) {
  // PROTO 2, then the opcode (with a plausible argument), then STOP.
  const std::pair<std::string, std::string> ops[] = {
      {"c", "GLOBAL"}, {"\x93", "STACK_GLOBAL"}, {"R", "REDUCE"}, {"b", "BUILD"}, {"i", "INST"}, {"o", "OBJ"},
      {"\x81", "NEWOBJ"}, {"\x92", "NEWOBJ_EX"}, {"P", "PERSID"}, {"Q", "BINPERSID"}, {"\x82", "EXT1"}};
  for (const auto& [op, name] : ops) {
    const Outcome o = read(std::string("\x80\x02", 2) + op + "os\nsystem\n.");
    EXPECT_FALSE(o.ok);
    EXPECT_NE(o.text.find("at byte 2: opcode " + name + " "), std::string::npos) << o.text;
    EXPECT_NE(o.text.find("never runs anything"), std::string::npos) << o.text;
  }
}

TEST(PickleReader, RefusesWhatIsNotAPickleOfProtocolTwoToFive) {
  EXPECT_NE(read("hello").text.find("not a pickle"), std::string::npos);
  EXPECT_NE(read(std::string("\x80\x01N.", 4)).text.find("protocol 1"), std::string::npos);
  EXPECT_NE(read(std::string("\x80\x06N.", 4)).text.find("protocol 6"), std::string::npos);
  EXPECT_NE(read("").text.find("not a pickle"), std::string::npos);
  EXPECT_NE(read(std::string("\x80\x04(lp0\n.", 9)).text.find("LIST"), std::string::npos);
}

TEST(PickleReader, TruncatedAtEveryByteIsAnErrorNeverACrash) {
  for (const auto& c : corpus()) {
    if (c["name"] != "snapshot_like" || c["protocol"] != 4 || c["pickler"] != "c") continue;
    const std::string full = unhex(c["hex"]);
    ASSERT_TRUE(read(full).ok);
    for (std::size_t n = 0; n < full.size(); ++n) {
      const Outcome o = read(full.substr(0, n));
      EXPECT_FALSE(o.ok) << "cut at " << n;
    }
  }
}

TEST(PickleReader, LimitsHugeLengthsDepthAndMemo) {
  // A BINUNICODE8 claiming 2^60 bytes: refused before any allocation.
  std::string huge("\x80\x04\x8d", 3);
  huge += std::string("\x00\x00\x00\x00\x00\x00\x00\x10", 8);
  EXPECT_NE(read(huge).text.find("beyond the limit"), std::string::npos);
  // LONG_BINPUT far beyond the memo limit.
  EXPECT_NE(read(std::string("\x80\x04Nr\xff\xff\xff\x7f.", 9)).text.find("beyond the limit"), std::string::npos);
  // A reference to a slot never stored.
  EXPECT_NE(read(std::string("\x80\x04h\x05.", 5)).text.find("never stored"), std::string::npos);
  // 200 nested lists.
  std::string deep("\x80\x04", 2);
  for (int i = 0; i < 200; ++i) deep += "]";
  EXPECT_NE(read(deep).text.find("deeper than"), std::string::npos);
  PickleLimits small;
  small.max_string_bytes = 4;
  EXPECT_NE(read(std::string("\x80\x04\x8c\x05hello.", 9), small).text.find("beyond the limit of 4"), std::string::npos);
}

TEST(PickleReader, AContainerLargerThanTheHoldBudgetIsReadAsFinishedAndSaysSo) {
  // [[], [0..299]]: the empty list may hold [0..299] until the pickle says otherwise. With a
  // budget smaller than that list the reader reads the empty list as finished (right here) and
  // counts one guess.
  auto find = [](const char* name) {
    for (const auto& c : corpus())
      if (c["name"] == name && c["protocol"] == 4 && c["pickler"] == "c") return unhex(c["hex"]);
    return std::string();
  };
  PickleLimits small;
  small.max_held_bytes = 4096;
  std::istringstream in(find("empty_then_long"));
  DumpHandler h;
  auto r = read_pickle(in, h, small);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->guesses, 1u);
  EXPECT_EQ(h.text().substr(0, 8), "[[],[0,1");
  // [[[0..299]], 5] read with the same guess is wrong ([0..299] is the inner list's one item): the
  // reader finds out when the pickle appends it, and stops with an error, not a wrong reading.
  const std::string data = find("single_long_in_batch");
  EXPECT_TRUE(read(data).ok);
  const Outcome guessed = read(data, small);
  EXPECT_FALSE(guessed.ok);
  EXPECT_NE(guessed.text.find("layout"), std::string::npos) << guessed.text;
}

TEST(PickleReader, RandomOpcodeStreamsEndInAnErrorNamingTheByte) {
  // PROTO 4, then random opcodes of the ones the reader takes (with random argument bytes) and
  // random bytes: each stream ends in a value or in an error that names its byte, never a crash
  // or a hang.
  static const char kTaken[] = "(.}])aesut\x85\x86\x87N\x88\x89JKMG\x8a\x8bX\x8c\x8d" "BC\x8e\x96\x94qhrj\x95";
  std::mt19937 rng(1717);
  for (int i = 0; i < 20000; ++i) {
    std::string s("\x80\x04", 2);
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      s += rng() % 8 == 0 ? static_cast<char>(rng() % 256) : kTaken[rng() % (sizeof kTaken - 1)];
      for (int a = static_cast<int>(rng() % 3); a > 0; --a) s += static_cast<char>(rng() % 256);
    }
    if (rng() % 2) s += '.';
    const Outcome o = read(s);
    if (!o.ok) {
      EXPECT_EQ(o.text.rfind("at byte ", 0), 0u) << o.text;
    }
  }
}
