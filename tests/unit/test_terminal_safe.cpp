// The terminal sanitiser (core/terminal_safe.hpp), issue 25: any user's command line
// (exec -a $'\e]52;c;...\a\e[2J...\nforged row') reached watch's table and full screen raw.
// Fuzzed: whatever the bytes, the output holds no control byte, is valid UTF-8 and holds no
// bidi control; clean text comes back unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "core/terminal_safe.hpp"

namespace vramdoc {
namespace {

// An independent strict UTF-8 reader: the code points of `s`, or false when it is not UTF-8.
bool code_points(const std::string& s, std::vector<std::uint32_t>& out) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int n = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || i + static_cast<std::size_t>(n) > s.size()) return false;
    std::uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
    for (int k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((c & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3fu);
    }
    const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    out.push_back(cp);
    i += static_cast<std::size_t>(n);
  }
  return true;
}

bool is_control(std::uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200b || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

// Fails with the input shown when `out` (the sanitised `in`) could still act on a terminal.
void expect_safe(const std::string& in, const std::string& out, bool newlines_allowed) {
  std::vector<std::uint32_t> cps;
  ASSERT_TRUE(code_points(out, cps)) << "not UTF-8 for input of " << in.size() << " bytes";
  for (std::uint32_t cp : cps) {
    if (newlines_allowed && cp == '\n') continue;
    ASSERT_FALSE(is_control(cp)) << "U+" << std::hex << cp << " left in the output";
  }
}

TEST(TerminalSafe, TheOsc52AndForgedRowCommandLineIsShownNotObeyed) {
  const std::string hostile = "\x1b]52;c;aGVsbG8=\a\x1b[2J\x1b[Hpython\nforged row\r";
  EXPECT_EQ(terminal_safe(hostile), "\\x1b]52;c;aGVsbG8=\\x07\\x1b[2J\\x1b[Hpython\\nforged row\\r");
  EXPECT_EQ(terminal_safe_lines(hostile), "\\x1b]52;c;aGVsbG8=\\x07\\x1b[2J\\x1b[Hpython\nforged row\\r");
}

TEST(TerminalSafe, BidiOverridesC1AndInvalidBytesBecomeEscapes) {
  EXPECT_EQ(terminal_safe("evil\u202egnp.exe"), "evil\\u202egnp.exe");
  EXPECT_EQ(terminal_safe("\xef\xbb\xbfmodel"), "\\ufeffmodel");  // a BOM: invisible otherwise
  EXPECT_EQ(terminal_safe("a\xc2\x9b" "31mb"), "a\\u009b31mb");    // CSI as a C1 control
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminal_safe("\xc0\xaf"), "\\xc0\\xaf");             // overlong '/'
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");    // a surrogate
  EXPECT_EQ(terminal_safe("\xe4\xb8"), "\\xe4\\xb8");             // cut short
  EXPECT_EQ(terminal_safe(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(terminal_safe("\x7f\t"), "\\x7f\\t");
}

TEST(TerminalSafe, CleanTextIsUnchanged) {
  const std::string samples[] = {"", "python train.py --lr 3e-4 --out /data/run\\1", "训练 模型 – naïve 😀 👩‍💻",
                                 "C:\\path\\x1b literally", "NVIDIA H200"};
  for (const auto& s : samples) {
    EXPECT_EQ(terminal_safe(s), s);
    EXPECT_EQ(terminal_safe_lines(s), s);
  }
  EXPECT_EQ(terminal_safe_lines("line 1\nline 2\n"), "line 1\nline 2\n");
}

// Random bytes, and random mixes of hostile pieces: always safe, and sanitising twice changes
// nothing (the output is clean text).
TEST(TerminalSafe, FuzzNeverLeavesAControlAndIsIdempotent) {
  std::mt19937 rng(25);
  const std::string pieces[] = {"\x1b", "[", "]", "52;c;", "\a", "\x9b", "\xc2\x9b", "\xc2\x85", "\n", "\r", "\t",
                                "\x7f", "\xe2\x80\xae", "\xe2\x81\xa6", "\xef\xbb\xbf", "\xf0\x9f\x98", "\xf4\x90\x80\x80",
                                "\xed\xbf\xbf", "\xe0\x80\x80", "a", "\xe4\xb8\xad", "\\", "\xf0\x9f\x98\x80", std::string(1, '\0')};
  for (int round = 0; round < 20000; ++round) {
    std::string in;
    const std::size_t length = rng() % 64;
    for (std::size_t i = 0; i < length; ++i) {
      if (round % 2) in += static_cast<char>(rng() & 0xff);
      else in += pieces[rng() % (sizeof pieces / sizeof pieces[0])];
    }
    const std::string one = terminal_safe(in), lines = terminal_safe_lines(in);
    expect_safe(in, one, false);
    expect_safe(in, lines, true);
    ASSERT_EQ(terminal_safe(one), one);
    ASSERT_EQ(terminal_safe_lines(lines), lines);
  }
}

// Clean text drawn at random from printable ASCII and multi-byte letters is the identity.
TEST(TerminalSafe, FuzzCleanTextIsTheIdentity) {
  std::mt19937 rng(7);
  const std::string letters[] = {"a", "Z", "~", " ", "\\", "/", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
                                 "\xe2\x80\x8d", "\xd7\x90", "\xc2\xa0"};
  for (int round = 0; round < 5000; ++round) {
    std::string in;
    for (std::size_t i = rng() % 40; i > 0; --i) in += letters[rng() % (sizeof letters / sizeof letters[0])];
    for (int k = 0; k < 3; ++k) in += static_cast<char>(0x20 + rng() % 0x5f);
    ASSERT_EQ(terminal_safe(in), in);
  }
}

}  // namespace
}  // namespace vramdoc
