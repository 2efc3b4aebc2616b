// The added tokens of a Hugging Face tokenizer.json ("added_tokens"): strings that are cut out
// of the text before pre-tokenization and become one id each, as tokenizers'
// AddedVocabulary::find_matches does:
//   - matches are found left to right, leftmost-longest, without overlaps (its Aho-Corasick
//     automaton); a match that is then skipped (below) still consumes its span;
//   - single_word: skipped unless the characters on both sides of the match are not \w (or it
//     touches the ends of the piece);
//   - lstrip / rstrip: the match extends over the whitespace (\s) left / right of it, never
//     back into the previous match; that whitespace is lost on decode;
//   - with skip_special, tokens marked special are skipped (tokenizers' encode_special_tokens:
//     they are then encoded as ordinary text).
// Tokens with normalized = false are matched on the whole text first, those with
// normalized = true afterwards on the pieces in between (graft accepts no normalizer, so the
// two only differ in this order).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graft::data {

struct HfAddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
};

struct TextPiece {
  std::string_view text;
  int32_t id = -1;  // the added token's id, or -1 for text between added tokens
};

// Matches one group of added tokens (the normalized or the non-normalized ones).
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<HfAddedToken> tokens);
  bool empty() const { return tokens_.empty(); }
  // Appends the pieces of text (non-empty; the whole text as one piece when nothing matches).
  void split(std::string_view text, bool skip_special, std::vector<TextPiece>& out) const;

 private:
  // The longest token that matches at text[pos], or -1 (an index into tokens_).
  int longest_at(std::string_view text, size_t pos) const;

  std::vector<HfAddedToken> tokens_;
  std::vector<std::vector<int>> by_first_byte_;  // token indices, longest first
};

}  // namespace graft::data
