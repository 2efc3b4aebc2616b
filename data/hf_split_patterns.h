// The pre-tokenizer regexes of byte-level BPE tokenizers, matched by hand (no regex engine):
// the pieces are exactly those of the tokenizers package (Oniguruma, leftmost-first
// alternation, Isolated split), on the character classes of data/unicode_classes.h.
//
//   kGpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//            (GPT-2; the ByteLevel pre-tokenizer's built-in regex)
//   kLlama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//            ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//            (Llama 3; case-insensitive contractions also match U+017F for s, as Oniguruma's
//            case folding does)
//
// Both patterns match at every position, so the pieces cover the text and concatenate back to
// it. A byte that is not well-formed UTF-8 (which tokenizers never sees: its input is a Python
// str) counts as one character of no class, i.e. [^\s\p{L}\p{N}].
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graft::data {

enum class SplitPattern { kGpt2, kLlama3 };

// The pattern whose regex text (as tokenizer.json spells it) is `regex`, if it is one of these.
std::optional<SplitPattern> split_pattern_for(const std::string& regex);

// Appends the non-empty pieces of text to out.
void split_with_pattern(std::string_view text, SplitPattern pattern,
                        std::vector<std::string_view>& out);

}  // namespace graft::data
