// Tokenizer files: save/load round trips and clear Status errors for missing, truncated and
// corrupt files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data/bpe.h"
#include "data/tokenizer.h"

namespace graft::data {
namespace {

std::string tmp_path(const std::string& name) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "tokenizer_io_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TokenizerIo, BpeSaveLoadRoundTrip) {
  auto t = BpeTokenizer::train({"the cat sat on the mat; the cat ate the rat", "that'll do"}, 300);
  const std::string p = tmp_path("bpe.txt");
  ASSERT_TRUE(t.save(p).ok());
  auto l = BpeTokenizer::load(p);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->merges(), t.merges());
  EXPECT_EQ(l->vocab_size(), t.vocab_size());
  auto any = load_tokenizer(p);
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ((*any)->kind(), "bpe");
  EXPECT_EQ((*any)->vocab_size(), t.vocab_size());
  const std::string s = "the rat sat on the cat\xFF";
  EXPECT_EQ((*any)->encode(s), t.encode(s));
}

TEST(TokenizerIo, ByteSaveLoadRoundTrip) {
  const std::string p = tmp_path("byte.txt");
  ASSERT_TRUE(ByteTokenizer().save(p).ok());
  auto any = load_tokenizer(p);
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ((*any)->kind(), "byte");
  EXPECT_EQ((*any)->vocab_size(), 257);
  write(p, "graft-byte 1\nvocab_size 300\nend\n");
  EXPECT_EQ(load_tokenizer(p).status().code(), absl::StatusCode::kDataLoss);
}

TEST(TokenizerIo, MissingFileIsNotFound) {
  EXPECT_EQ(BpeTokenizer::load(tmp_path("nope.txt")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(load_tokenizer(tmp_path("nope.txt")).status().code(), absl::StatusCode::kNotFound);
}

// Each corrupt variant of a valid 2-merge file fails with DataLoss and says why.
TEST(TokenizerIo, CorruptFilesFailWithDataLoss) {
  const std::string good = "graft-bpe 1\nvocab_size 259\nmerges 2\n97 98\n256 99\nend\n";
  const std::string p = tmp_path("corrupt.txt");
  write(p, good);
  ASSERT_TRUE(BpeTokenizer::load(p).ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not a graft-bpe"},
      {"graft-bpe 2\n", "not a graft-bpe"},
      {"graft-bpe 1\nvocab 259\n", "vocab_size"},
      {"graft-bpe 1\nvocab_size 300\nmerges 2\n97 98\n256 99\nend\n", "!= 257 + merges"},
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 98\n", "truncated"},  // cut lines
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 98\n256 99\n", "missing 'end'"},
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 98\n256 9", "missing 'end'"},  // cut mid-line
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 x\n256 99\nend\n", "bad merge line"},
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 98 7\n256 99\nend\n", "bad merge line"},
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 98\n257 99\nend\n", "not defined"},
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n-3 98\n256 99\nend\n", "not defined"},
      {"graft-bpe 1\nvocab_size 259\nmerges 2\n97 98\n97 98\nend\n", "duplicate"},
      {good + "97 98\n", "trailing"},
  };
  for (const auto& [text, why] : cases) {
    write(p, text);
    auto l = BpeTokenizer::load(p);
    ASSERT_FALSE(l.ok()) << text;
    EXPECT_EQ(l.status().code(), absl::StatusCode::kDataLoss) << text;
    EXPECT_NE(l.status().message().find(why), std::string::npos) << l.status();
    EXPECT_FALSE(load_tokenizer(p).ok()) << text;
  }
  // A real file truncated at every byte length is always rejected, never crashes.
  auto t = BpeTokenizer::train({"aaa bbb aaa bbb ab ab"}, 262);
  ASSERT_TRUE(t.save(p).ok());
  const std::string full = read(p);
  for (size_t n = 0; n + 1 < full.size(); ++n) {
    write(p, full.substr(0, n));
    EXPECT_FALSE(load_tokenizer(p).ok()) << "accepted a file cut at " << n;
  }
}

}  // namespace
}  // namespace graft::data
