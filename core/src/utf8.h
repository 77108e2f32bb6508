// Well-formed UTF-8, as Unicode's table of well-formed byte sequences defines it (no overlong forms, no
// surrogates, nothing above U+10FFFF): one rule for the error messages (escape_text), the JSON reader
// (which refuses anything else) and the JSON writer (which replaces anything else with U+FFFD).
#pragma once

#include <cstddef>
#include <string_view>

namespace perfcard {

// The length of the well-formed sequence that starts at s[i] (1 for ASCII), or 0 when there is none there.
// `prefix`, when given, receives how many bytes from s[i] on are a well-formed start of one (at least 1):
// where the next sequence begins after an ill-formed one, as the replacement of ill-formed parts counts.
inline std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t* prefix = nullptr) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (prefix) *prefix = 1;
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
    if (prefix) *prefix = k + 1;
  }
  return len;
}

}  // namespace perfcard
