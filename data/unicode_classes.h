// Unicode character classes for Hugging Face tokenizer rules, and strict UTF-8 decoding.
//
// The classes are those the tokenizers package tests: \p{L}, \p{N} and \s in its pre-tokenizer
// regexes (Oniguruma) and \w / \s in its added-token rules (the Rust regex crate), for Unicode
// 16.0.0, from data/unicode_table.inc (generated and checked on every code point against
// tokenizers by tools/make_unicode_tables.py).
//
// Text is bytes: decode_utf8 reads one well-formed UTF-8 character (no overlong forms, no
// surrogates, nothing above U+10FFFF); any other byte is one invalid unit of length 1 that
// belongs to no class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace graft::data::unicode {

enum ClassBits : uint8_t {
  kLetter = 1,  // general category L*
  kNumber = 2,  // general category N*
  kSpace = 4,   // White_Space: U+0009..U+000D, U+0085, Zs, Zl, Zp
  kWord = 8,    // Alphabetic, M*, Nd, Pc, Join_Control
};

inline constexpr uint32_t kInvalid = 0xFFFFFFFFu;  // the code point of an invalid byte

uint8_t classes(uint32_t code_point);  // 0 for kInvalid and unassigned code points

struct Char {
  uint32_t cp = kInvalid;  // kInvalid for a byte that starts no well-formed character
  uint32_t len = 1;        // bytes
};

// The character starting at s[i] (i < s.size()).
Char decode_utf8(std::string_view s, size_t i);

// The last character of s (non-empty), read as a forward decode of s would end: a well-formed
// character ending at s.size(), else the invalid last byte.
Char last_char(std::string_view s);

}  // namespace graft::data::unicode
