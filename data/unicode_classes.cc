#include "data/unicode_classes.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace graft::data::unicode {
namespace {

struct Run {
  uint32_t first;
  uint8_t bits;
};

constexpr Run kRuns[] = {
#include "data/unicode_table.inc"
};

uint8_t lookup(uint32_t cp) {
  // The last run whose first code point is <= cp.
  auto it = std::upper_bound(std::begin(kRuns), std::end(kRuns), cp,
                             [](uint32_t c, const Run& r) { return c < r.first; });
  return std::prev(it)->bits;
}

const std::array<uint8_t, 256>& latin1() {
  static const std::array<uint8_t, 256> table = [] {
    std::array<uint8_t, 256> t{};
    for (uint32_t c = 0; c < 256; ++c) t[c] = lookup(c);
    return t;
  }();
  return table;
}

bool continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

}  // namespace

uint8_t classes(uint32_t cp) {
  if (cp < 256) return latin1()[cp];
  if (cp > 0x10FFFF) return 0;
  return lookup(cp);
}

Char decode_utf8(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c0 = b(i);
  if (c0 < 0x80) return {c0, 1};
  const size_t left = s.size() - i;
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    if (left >= 2 && continuation(b(i + 1))) return {(c0 & 0x1Fu) << 6 | (b(i + 1) & 0x3Fu), 2};
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    if (left >= 3 && continuation(b(i + 1)) && continuation(b(i + 2))) {
      const uint32_t cp = (c0 & 0x0Fu) << 12 | (b(i + 1) & 0x3Fu) << 6 | (b(i + 2) & 0x3Fu);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) return {cp, 3};
    }
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    if (left >= 4 && continuation(b(i + 1)) && continuation(b(i + 2)) && continuation(b(i + 3))) {
      const uint32_t cp = (c0 & 0x07u) << 18 | (b(i + 1) & 0x3Fu) << 12 | (b(i + 2) & 0x3Fu) << 6 |
                          (b(i + 3) & 0x3Fu);
      if (cp >= 0x10000 && cp <= 0x10FFFF) return {cp, 4};
    }
  }
  return {kInvalid, 1};
}

Char last_char(std::string_view s) {
  // A well-formed character starts with a non-continuation byte, which no earlier character
  // can extend over, so the forward decode of s ends with it exactly when it decodes whole.
  for (size_t len = 1; len <= 4 && len <= s.size(); ++len) {
    const size_t start = s.size() - len;
    if (continuation(static_cast<unsigned char>(s[start]))) continue;
    const Char c = decode_utf8(s, start);
    if (c.cp != kInvalid && c.len == len) return c;
    break;
  }
  return {kInvalid, 1};
}

}  // namespace graft::data::unicode
