#include "data/pretokenize.h"

namespace graft::data {
namespace {

enum Class { kLetter, kDigit, kSpace, kOther };

Class classify(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80) return kLetter;
  if (c >= '0' && c <= '9') return kDigit;
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') return kSpace;
  return kOther;
}

// Length of a contraction suffix at text[i] (which is '\''), or 0.
size_t contraction(std::string_view text, size_t i) {
  auto at = [&](size_t k) { return i + k < text.size() ? text[i + k] : '\0'; };
  const char a = at(1), b = at(2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> out;
  const size_t n = text.size();
  auto cls = [&](size_t k) { return classify(static_cast<unsigned char>(text[k])); };
  size_t i = 0;
  while (i < n) {
    const size_t start = i;
    if (text[i] == '\'') {
      if (size_t len = contraction(text, i)) {
        out.push_back(text.substr(i, len));
        i += len;
        continue;
      }
    }
    Class c = cls(i);
    if (c == kSpace) {
      // A lone ' ' before a non-space joins the next word; otherwise take the whitespace
      // run, leaving its last char to the next word if that char is ' ' and a word follows.
      size_t j = i;
      while (j < n && cls(j) == kSpace) ++j;
      if (j < n && text[j - 1] == ' ') {
        if (j - 1 > i) {
          out.push_back(text.substr(i, j - 1 - i));
          i = j - 1;
        }
        // Now text[i] == ' ' followed by a non-space: fall through to the word case.
        c = cls(i + 1);
        size_t k = i + 1;
        while (k < n && cls(k) == c) ++k;
        out.push_back(text.substr(i, k - i));
        i = k;
      } else {
        out.push_back(text.substr(i, j - i));
        i = j;
      }
      continue;
    }
    while (i < n && cls(i) == c) ++i;
    out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace graft::data
