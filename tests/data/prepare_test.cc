// prepare: deterministic split, the files it writes (decoded back to the documents), reuse
// when outputs match, rebuild when options or corpus change; the unigram baseline.
#include "data/prepare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/baseline.h"
#include "data/token_file.h"
#include "data/tokenizer.h"

namespace graft::data {
namespace {
namespace fs = std::filesystem;

std::string tmp_dir(const std::string& name) {
  const auto dir = fs::path(testing::TempDir()) / "prepare_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<std::string> make_docs(int n) {
  std::vector<std::string> docs;
  for (int i = 0; i < n; ++i) {
    docs.push_back("Document " + std::to_string(i) + " says: the quick brown fox jumps " +
                   std::string(static_cast<size_t>(i % 7), 'o') + "ver the lazy dog.");
  }
  return docs;
}

TEST(Split, DeterministicBySeedAndContent) {
  const auto docs = make_docs(2000);
  const Split a = split_docs(docs, 0.1, 3), b = split_docs(docs, 0.1, 3);
  EXPECT_EQ(a.val, b.val);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.train.size() + a.val.size(), docs.size());
  EXPECT_NEAR(static_cast<double>(a.val.size()) / docs.size(), 0.1, 0.03);
  EXPECT_NE(split_docs(docs, 0.1, 4).val, a.val);
  // Membership depends on the document only, not on order or the other documents.
  std::vector<std::string> reversed(docs.rbegin(), docs.rend());
  for (const auto& d : docs) {
    EXPECT_EQ(is_val_doc(d, 0.1, 3), std::find(a.val.begin(), a.val.end(), d) != a.val.end());
  }
  const Split r = split_docs(reversed, 0.1, 3);
  EXPECT_EQ(r.val.size(), a.val.size());
  // Tiny corpora still get both sides; val_fraction 0 gives no validation docs.
  const Split tiny = split_docs({"one", "two"}, 0.05, 0);
  EXPECT_EQ(tiny.train.size(), 1u);
  EXPECT_EQ(tiny.val.size(), 1u);
  EXPECT_TRUE(split_docs(docs, 0.0, 0).val.empty());
}

std::string write_corpus(const std::string& dir, const std::vector<std::string>& docs) {
  const std::string p = (fs::path(dir) / "corpus.txt").string();
  std::ofstream out(p, std::ios::binary);
  for (const auto& d : docs) out << d << "\n\n";
  return p;
}

// Splits a token stream at eot and decodes each document.
std::vector<std::string> decode_docs(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> docs;
  std::vector<int32_t> cur;
  for (int32_t id : ids) {
    if (id == tok.eot_id()) {
      docs.push_back(tok.decode(cur));
      cur.clear();
    } else {
      cur.push_back(id);
    }
  }
  EXPECT_TRUE(cur.empty()) << "stream does not end with eot";
  return docs;
}

void check_outputs(const PrepareResult& r, const std::vector<std::string>& docs,
                   const PrepareOptions& o) {
  auto tok = load_tokenizer(r.tokenizer_path);
  ASSERT_TRUE(tok.ok()) << tok.status();
  auto train = TokenFile::open(r.train_path);
  auto val = TokenFile::open(r.val_path);
  ASSERT_TRUE(train.ok() && val.ok());
  const Split want = split_docs(docs, o.val_fraction, o.seed);
  EXPECT_EQ(decode_docs(**tok, (*train)->read_all()), want.train);
  EXPECT_EQ(decode_docs(**tok, (*val)->read_all()), want.val);
  EXPECT_EQ(r.train_docs, static_cast<int64_t>(want.train.size()));
  EXPECT_EQ(r.val_tokens, (*val)->size());
  EXPECT_EQ((*train)->vocab_size(), (*tok)->vocab_size());
  std::ifstream in(r.meta_path);
  auto meta = nlohmann::json::parse(in);
  EXPECT_EQ(meta["train"]["tokens"].get<int64_t>(), (*train)->size());
  EXPECT_EQ(meta["val"]["docs"].get<int64_t>(), r.val_docs);
  EXPECT_EQ(meta["vocab_size"].get<int64_t>(), (*tok)->vocab_size());
  EXPECT_EQ(meta["corpus"]["docs"].get<int64_t>(), static_cast<int64_t>(docs.size()));
  auto ce = unigram_cross_entropy(**train, **val);
  ASSERT_TRUE(ce.ok());
  EXPECT_DOUBLE_EQ(meta["unigram_nats_per_token"].get<double>(), *ce);
}

TEST(Prepare, WritesDecodableSplitsAndReusesMatchingOutputs) {
  const std::string dir = tmp_dir("run");
  auto docs = make_docs(300);
  docs.push_back("bytes \xFF\xFE invalid utf-8 \xC3");
  PrepareOptions o;
  o.input = write_corpus(dir, docs);
  o.out_dir = (fs::path(dir) / "out").string();
  o.tokenizer = "bpe";
  o.vocab_size = 400;
  o.val_fraction = 0.1;
  o.seed = 1;
  auto r = prepare(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->reused);
  EXPECT_EQ(r->vocab_size, 400);
  check_outputs(*r, docs, o);
  const auto written = fs::last_write_time(r->train_path);

  auto again = prepare(o);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(again->train_tokens, r->train_tokens);
  EXPECT_EQ(again->unigram_nats, r->unigram_nats);
  EXPECT_EQ(fs::last_write_time(r->train_path), written);

  o.tokenizer = "byte";  // changed options rebuild
  auto byte = prepare(o);
  ASSERT_TRUE(byte.ok()) << byte.status();
  EXPECT_FALSE(byte->reused);
  EXPECT_EQ(byte->vocab_size, 257);
  EXPECT_EQ(byte->train_tokens, byte->train_bytes + byte->train_docs);  // bytes + one eot each
  check_outputs(*byte, docs, o);

  docs.push_back("one more document");  // changed corpus rebuilds
  write_corpus(dir, docs);
  auto grown = prepare(o);
  ASSERT_TRUE(grown.ok());
  EXPECT_FALSE(grown->reused);
  check_outputs(*grown, docs, o);

  fs::remove(grown->val_path);  // a missing output rebuilds
  auto healed = prepare(o);
  ASSERT_TRUE(healed.ok());
  EXPECT_FALSE(healed->reused);
  EXPECT_TRUE(fs::exists(healed->val_path));
}

TEST(Prepare, BadOptionsAndInputs) {
  PrepareOptions o;
  o.out_dir = tmp_dir("bad");
  o.input = o.out_dir + "/missing.txt";
  EXPECT_EQ(prepare(o).status().code(), absl::StatusCode::kNotFound);
  o.input = "default";
  o.tokenizer = "words";
  EXPECT_EQ(prepare(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.tokenizer = "bpe";
  o.vocab_size = 100;
  EXPECT_EQ(prepare(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.vocab_size = 300;
  o.val_fraction = 1.0;
  EXPECT_EQ(prepare(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.out_dir = "";
  EXPECT_EQ(prepare(o).status().code(), absl::StatusCode::kInvalidArgument);
}

// Hand computation: train {0, 0, 1}, V = 3 -> p(0) = 3/6, p(1) = 2/6, p(2) = 1/6.
// val {0, 2, 1}: (ln 2 + ln 6 + ln 3) / 3.
TEST(Unigram, MatchesHandComputedCrossEntropy) {
  const double want = (std::log(2.0) + std::log(6.0) + std::log(3.0)) / 3.0;
  EXPECT_NEAR(unigram_cross_entropy({0, 0, 1}, {0, 2, 1}, 3), want, 1e-12);
  // Uniform when train is empty: ln V.
  EXPECT_NEAR(unigram_cross_entropy({}, {4, 1}, 5), std::log(5.0), 1e-12);
  const std::string dir = tmp_dir("unigram");
  ASSERT_TRUE(write_token_file(dir + "/t", {0, 0, 1}, 3).ok());
  ASSERT_TRUE(write_token_file(dir + "/v", {0, 2, 1}, 3).ok());
  ASSERT_TRUE(write_token_file(dir + "/w", {0, 2, 1}, 4).ok());
  auto t = TokenFile::open(dir + "/t"), v = TokenFile::open(dir + "/v"),
       w = TokenFile::open(dir + "/w");
  auto ce = unigram_cross_entropy(**t, **v);
  ASSERT_TRUE(ce.ok());
  EXPECT_NEAR(*ce, want, 1e-12);
  EXPECT_EQ(unigram_cross_entropy(**t, **w).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THROW(unigram_cross_entropy({0}, {}, 3), Error);
  EXPECT_THROW(unigram_cross_entropy({0}, {3}, 3), Error);
}

}  // namespace
}  // namespace graft::data
