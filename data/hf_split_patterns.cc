#include "data/hf_split_patterns.h"

#include <cstdint>

#include "data/unicode_classes.h"

namespace graft::data {
namespace {

using unicode::kLetter;
using unicode::kNumber;
using unicode::kSpace;

constexpr char kGpt2Regex[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr char kLlama3Regex[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The text as characters: code point, class bits and byte offset (one sentinel at the end).
class Chars {
 public:
  explicit Chars(std::string_view text) {
    cp_.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size();) {
      const unicode::Char c = unicode::decode_utf8(text, i);
      cp_.push_back(c.cp);
      cls_.push_back(c.cp == unicode::kInvalid ? 0 : unicode::classes(c.cp));
      off_.push_back(static_cast<uint32_t>(i));
      i += c.len;
    }
    off_.push_back(static_cast<uint32_t>(text.size()));
  }
  size_t size() const { return cp_.size(); }
  size_t offset(size_t k) const { return off_[k]; }
  uint32_t cp(size_t k) const { return k < cp_.size() ? cp_[k] : unicode::kInvalid; }
  bool is(size_t k, uint8_t bits) const { return k < cls_.size() && (cls_[k] & bits) != 0; }
  // [^\s\p{L}\p{N}]
  bool other(size_t k) const {
    return k < cls_.size() && (cls_[k] & (kLetter | kNumber | kSpace)) == 0;
  }
  bool newline(size_t k) const { return cp(k) == '\r' || cp(k) == '\n'; }
  size_t run(size_t k, uint8_t bits) const {
    while (is(k, bits)) ++k;
    return k;
  }
  size_t run_other(size_t k) const {
    while (other(k)) ++k;
    return k;
  }

 private:
  std::vector<uint32_t> cp_;
  std::vector<uint8_t> cls_;
  std::vector<uint32_t> off_;
};

uint32_t fold(uint32_t c, bool ignore_case) {
  if (!ignore_case) return c;
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c == 0x17F) return 's';  // LATIN SMALL LETTER LONG S folds to s
  return c;
}

// 's|'t|'re|'ve|'m|'ll|'d at k: its length in characters, or 0.
size_t contraction(const Chars& t, size_t k, bool ignore_case) {
  if (t.cp(k) != '\'') return 0;
  const uint32_t a = fold(t.cp(k + 1), ignore_case);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  const uint32_t b = fold(t.cp(k + 2), ignore_case);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S)|\s+ at a whitespace character k: the run, less its last character when a
// non-space follows and the run is longer than one.
size_t space_run(const Chars& t, size_t k) {
  const size_t end = t.run(k, kSpace);
  if (end == t.size() || end - 1 == k) return end;
  return end - 1;
}

size_t match_gpt2(const Chars& t, size_t k) {
  if (size_t n = contraction(t, k, false)) return k + n;
  const size_t s = t.cp(k) == ' ' ? k + 1 : k;  // ' ?'
  if (t.is(s, kLetter)) return t.run(s, kLetter);
  if (t.is(s, kNumber)) return t.run(s, kNumber);
  if (t.other(s)) return t.run_other(s);
  return space_run(t, k);
}

size_t match_llama3(const Chars& t, size_t k) {
  if (size_t n = contraction(t, k, true)) return k + n;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!t.is(k, kLetter | kNumber) && !t.newline(k) && t.is(k + 1, kLetter)) {
    return t.run(k + 1, kLetter);
  }
  if (t.is(k, kLetter)) return t.run(k, kLetter);
  // \p{N}{1,3}
  if (t.is(k, kNumber)) {
    size_t e = k;
    while (e < k + 3 && t.is(e, kNumber)) ++e;
    return e;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const size_t s = t.cp(k) == ' ' ? k + 1 : k;
  if (t.other(s)) {
    size_t e = t.run_other(s);
    while (t.newline(e)) ++e;
    return e;
  }
  // \s*[\r\n]+: the whitespace run up to and including its last \r or \n.
  const size_t end = t.run(k, kSpace);
  for (size_t e = end; e > k; --e) {
    if (t.newline(e - 1)) return e;
  }
  return space_run(t, k);
}

}  // namespace

std::optional<SplitPattern> split_pattern_for(const std::string& regex) {
  if (regex == kGpt2Regex) return SplitPattern::kGpt2;
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  return std::nullopt;
}

void split_with_pattern(std::string_view text, SplitPattern pattern,
                        std::vector<std::string_view>& out) {
  const Chars t(text);
  for (size_t k = 0; k < t.size();) {
    const size_t e = pattern == SplitPattern::kGpt2 ? match_gpt2(t, k) : match_llama3(t, k);
    out.push_back(text.substr(t.offset(k), t.offset(e) - t.offset(k)));
    k = e;
  }
}

}  // namespace graft::data
