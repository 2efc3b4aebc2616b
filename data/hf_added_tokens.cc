#include "data/hf_added_tokens.h"

#include <algorithm>

#include "data/unicode_classes.h"

namespace graft::data {
namespace {

bool is_space(unicode::Char c) {
  return c.cp != unicode::kInvalid && (unicode::classes(c.cp) & unicode::kSpace) != 0;
}
bool is_word(unicode::Char c) {
  return c.cp != unicode::kInvalid && (unicode::classes(c.cp) & unicode::kWord) != 0;
}

// Where the whitespace at the end of s begins (s.size() if none): tokenizers' \s*$.
size_t trailing_space_start(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    const unicode::Char c = unicode::last_char(s.substr(0, end));
    if (!is_space(c)) break;
    end -= c.len;
  }
  return end;
}

// How many bytes of whitespace s starts with: tokenizers' ^\s*.
size_t leading_space_length(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unicode::Char c = unicode::decode_utf8(s, i);
    if (!is_space(c)) break;
    i += c.len;
  }
  return i;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<HfAddedToken> tokens)
    : tokens_(std::move(tokens)), by_first_byte_(256) {
  for (size_t k = 0; k < tokens_.size(); ++k) {
    if (tokens_[k].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[k].content[0])].push_back(
        static_cast<int>(k));
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

int AddedTokenMatcher::longest_at(std::string_view text, size_t pos) const {
  for (int k : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    const std::string& c = tokens_[k].content;
    if (text.compare(pos, c.size(), c) == 0) return k;
  }
  return -1;
}

void AddedTokenMatcher::split(std::string_view text, bool skip_special,
                              std::vector<TextPiece>& out) const {
  size_t start_offset = 0;  // end of the previous piece
  size_t pos = 0;           // where the search for the next match goes on
  while (!tokens_.empty() && pos < text.size()) {
    const int k = longest_at(text, pos);
    if (k < 0) {
      ++pos;
      continue;
    }
    const HfAddedToken& t = tokens_[k];
    size_t start = pos, stop = pos + t.content.size();
    pos = stop;
    if (skip_special && t.special) continue;
    if (t.single_word) {
      const bool space_before = start == 0 || !is_word(unicode::last_char(text.substr(0, start)));
      const bool space_after = stop == text.size() || !is_word(unicode::decode_utf8(text, stop));
      if (!space_before || !space_after) continue;
    }
    if (t.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
    if (t.rstrip) stop += leading_space_length(text.substr(stop));
    if (start_offset < start) out.push_back({text.substr(start_offset, start - start_offset), -1});
    out.push_back({text.substr(start, stop - start), t.id});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({text.substr(start_offset), -1});
}

}  // namespace graft::data
