// Corpora: the default fortunes corpus is installed and non-trivial; record and paragraph
// splitting on hand-written inputs; clear errors for missing inputs.
#include "data/corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace graft::data {
namespace {
namespace fs = std::filesystem;

TEST(Corpus, DefaultFortunesArePresentAndNonTrivial) {
  auto c = load_fortunes();
  ASSERT_TRUE(c.ok()) << c.status() << " (tools/bootstrap.sh installs the package)";
  EXPECT_GT(c->docs.size(), 10000u);
  EXPECT_GT(c->total_bytes(), 2'000'000);
  EXPECT_EQ(c->source, std::string("fortunes:") + kFortunesDir);
  bool found = false;
  for (const auto& d : c->docs) {
    ASSERT_FALSE(d.empty());
    EXPECT_EQ(d.find('\b'), std::string::npos);
    EXPECT_NE(d.back(), '\n');
    EXPECT_NE(d, "%");
    found = found || d == "A day for firm decisions!!!!!  Or is it?";
  }
  EXPECT_TRUE(found) << "first fortune of the `fortunes` file missing";
  auto again = load_corpus("default");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->fingerprint(), c->fingerprint());
}

TEST(Corpus, MissingFortunesSaysRunBootstrap) {
  auto c = load_fortunes("/nonexistent/fortunes");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("tools/bootstrap.sh"), std::string::npos);
}

TEST(Corpus, SplitsRecordsParagraphsAndOverstrike) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_fortune_records("one\nline\n%\ntwo\n%\n%\nthree"),
            (V{"one\nline", "two", "three"}));
  EXPECT_EQ(split_paragraphs("a\nb\n\n  \nc\n\n\n"), (V{"a\nb", "c"}));
  EXPECT_EQ(strip_overstrike("_\bb_\bo_\bl_\bd x\bx"), "bold x");
}

TEST(Corpus, TextFilesAndDirectories) {
  const auto dir = fs::path(testing::TempDir()) / "corpus_test";
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "b.txt") << "para one\n\npara two\n";
  std::ofstream(dir / "sub" / "a.txt") << "alpha\n";
  std::ofstream(dir / "skip.md") << "not text\n";
  auto f = load_text_corpus((dir / "b.txt").string());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->docs, (std::vector<std::string>{"para one", "para two"}));
  auto whole = load_text_corpus((dir / "b.txt").string(), /*paragraphs=*/false);
  EXPECT_EQ(whole->docs, (std::vector<std::string>{"para one\n\npara two"}));
  auto d = load_text_corpus(dir.string());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->docs, (std::vector<std::string>{"para one", "para two", "alpha"}));
  EXPECT_EQ(load_text_corpus((dir / "none").string()).status().code(), absl::StatusCode::kNotFound);
  fs::create_directories(dir / "empty");
  EXPECT_EQ(load_text_corpus((dir / "empty").string()).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graft::data
