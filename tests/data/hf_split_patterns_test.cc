// GPT-2's and Llama 3's pre-tokenizer regexes, matched by hand (data/hf_split_patterns.h),
// against the pieces the tokenizers package (Oniguruma) cut the same texts into, recorded by
// tools/make_hf_tokenizer_vectors.py.
#include "data/hf_split_patterns.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace graft::data {
namespace {

std::vector<int> piece_lengths(std::string_view text, SplitPattern p) {
  std::vector<std::string_view> pieces;
  split_with_pattern(text, p, pieces);
  std::vector<int> lengths;
  for (auto piece : pieces) lengths.push_back(static_cast<int>(piece.size()));
  return lengths;
}

TEST(HfSplitPatterns, MatchTokenizersPieces) {
  std::ifstream in("tests/data/testdata/hf/split_patterns.vectors.json");
  ASSERT_TRUE(in);
  const auto v = nlohmann::json::parse(in);
  ASSERT_GT(v["cases"].size(), 300u);
  for (const auto& c : v["cases"]) {
    const std::string text = c["text"].get<std::string>();
    EXPECT_EQ(piece_lengths(text, SplitPattern::kGpt2), c["gpt2"].get<std::vector<int>>())
        << "gpt2: " << c["text"].dump();
    EXPECT_EQ(piece_lengths(text, SplitPattern::kLlama3), c["llama3"].get<std::vector<int>>())
        << "llama3: " << c["text"].dump();
  }
}

TEST(HfSplitPatterns, KnowsTheRegexesByTheirText) {
  EXPECT_EQ(split_pattern_for(
                R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"),
            SplitPattern::kGpt2);
  EXPECT_EQ(
      split_pattern_for(
          R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
      SplitPattern::kLlama3);
  // Qwen2's variant (\p{N} one digit at a time) is a different regex: not taken for Llama 3's.
  EXPECT_FALSE(split_pattern_for(
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"));
  EXPECT_FALSE(split_pattern_for(""));
}

}  // namespace
}  // namespace graft::data
