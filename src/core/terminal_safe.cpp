#include "core/terminal_safe.hpp"

#include <cstdint>

namespace vramdoc {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void escape_byte(std::string& out, unsigned char b) {
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

void escape_code_point(std::string& out, std::uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
}

// The code point of the valid UTF-8 sequence at `s[i]` and its length; length 0 when the bytes
// there are not one (overlong forms, surrogates, above U+10FFFF, a sequence cut short).
std::uint32_t decode(std::string_view s, std::size_t i, std::size_t& length) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  length = 0;
  if (b < 0x80) {
    length = 1;
    return b;
  }
  const std::size_t n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  std::uint32_t cp = b & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;  // overlong, too large
  if (cp >= 0xd800 && cp <= 0xdfff) return 0;                                            // a surrogate
  length = n;
  return cp;
}

// Characters that print nothing yet change what is shown: C1 controls, bidi controls and
// overrides, line / paragraph separators, zero-width space, the byte-order mark.
bool invisible_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200b || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

std::string sanitise(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 0;
    const std::uint32_t cp = decode(text, i, n);
    if (n == 0) {  // not UTF-8: each byte of it escaped
      escape_byte(out, static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (cp < 0x20 || cp == 0x7f) {
      if (cp == '\n' && keep_newlines) out += '\n';
      else if (cp == '\n') out += "\\n";
      else if (cp == '\t') out += "\\t";
      else if (cp == '\r') out += "\\r";
      else escape_byte(out, static_cast<unsigned char>(cp));
    } else if (invisible_control(cp)) {
      escape_code_point(out, cp);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string terminal_safe(std::string_view text) { return sanitise(text, false); }

std::string terminal_safe_lines(std::string_view text) { return sanitise(text, true); }

}  // namespace vramdoc
