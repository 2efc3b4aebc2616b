// GPT-2-like pre-tokenization without a regex library: splits bytes into words that BPE
// merges never cross. The pieces concatenate back to the input exactly, for any bytes.
//
// Byte classes: letters (ASCII letters and every byte >= 0x80, so UTF-8 sequences stay
// inside words), digits, whitespace (space \t \n \r \v \f), other. Pieces, as in GPT-2's
// pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ :
//   - an English contraction suffix ('s 't 're 've 'm 'll 'd);
//   - an optional single leading space followed by a run of letters, of digits, or of others;
//   - a whitespace run, leaving its last space to the word that follows it.
#pragma once

#include <string_view>
#include <vector>

namespace graft::data {

std::vector<std::string_view> pretokenize(std::string_view text);

}  // namespace graft::data
