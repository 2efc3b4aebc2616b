// Byte and BPE tokenizers: exact round trips (random bytes, invalid UTF-8), BPE merges
// against hand-worked examples and against a naive trainer that recounts every pair each step.
#include "data/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/error.h"
#include "data/bpe.h"
#include "data/corpus.h"
#include "data/pretokenize.h"
#include "data/rng.h"

namespace graft::data {
namespace {

std::string random_bytes(uint64_t seed, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(splitmix64(seed) & 0xFF);
  return s;
}

// Random text biased towards spaces, letters, apostrophes and newlines, plus raw bytes.
std::string random_text(uint64_t seed, size_t n) {
  const std::string alphabet = "aab c'  \n\t.st re ll1 \xC3\xA9\xFF\x80";
  std::string s(n, '\0');
  for (auto& c : s) {
    c = alphabet[uniform_below(seed, alphabet.size())];
    if (uniform_below(seed, 20) == 0) c = static_cast<char>(splitmix64(seed) & 0xFF);
  }
  return s;
}

TEST(ByteTokenizer, RoundTripsAllBytes) {
  ByteTokenizer t;
  std::string all(256, '\0');
  for (int i = 0; i < 256; ++i) all[i] = static_cast<char>(i);
  auto ids = t.encode(all);
  ASSERT_EQ(ids.size(), 256u);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(ids[i], i);
  EXPECT_EQ(t.decode(ids), all);
  EXPECT_EQ(t.vocab_size(), 257);
  EXPECT_EQ(t.eot_id(), 256);
  EXPECT_EQ(t.decode({104, 105, 256}), std::string("hi") + kEotText);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::string s = random_bytes(seed, 1 + seed * 37);
    EXPECT_EQ(t.decode(t.encode(s)), s);
  }
}

TEST(ByteTokenizer, DecodeRejectsOutOfRangeIds) {
  ByteTokenizer t;
  try {
    t.decode({1, 257});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[decode]", 0), 0u) << e.what();
  }
  EXPECT_THROW(t.decode({-1}), Error);
}

TEST(Pretokenize, SplitsLikeGpt2AndConcatenatesBack) {
  auto pieces = [](std::string_view s) {
    std::vector<std::string> v;
    for (auto p : pretokenize(s)) v.emplace_back(p);
    return v;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(pieces("don't stop"), (V{"don", "'t", " stop"}));
  EXPECT_EQ(pieces("we'll 42 cats!!"), (V{"we", "'ll", " 42", " cats", "!!"}));
  EXPECT_EQ(pieces("a   b"), (V{"a", "  ", " b"}));    // run keeps all but the last space
  EXPECT_EQ(pieces("a\n\nb"), (V{"a", "\n\n", "b"}));  // no space to lend
  EXPECT_EQ(pieces("end  "), (V{"end", "  "}));        // trailing whitespace stays whole
  EXPECT_EQ(pieces("x\n b"), (V{"x", "\n", " b"}));
  EXPECT_EQ(pieces("caf\xC3\xA9 ok"), (V{"caf\xC3\xA9", " ok"}));  // UTF-8 stays in the word
  EXPECT_TRUE(pieces("").empty());
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::string s = seed % 2 ? random_bytes(seed, 300) : random_text(seed, 300);
    std::string joined;
    for (auto p : pretokenize(s)) {
      EXPECT_FALSE(p.empty());
      joined += p;
    }
    EXPECT_EQ(joined, s);
  }
}

// Hand-worked: "ab ab ab abc" -> words "ab" x1, " ab" x2, " abc" x1.
// Pair counts: (a,b)=4, (' ',a)=3, (b,c)=1 -> merge 256 = a b.
// Then (' ',256)=3, (256,c)=1 -> merge 257 = ' ' 256.  Then (257,c)=1 -> merge 258 = 257 c.
TEST(BpeTokenizer, MergesMatchHandWorkedExample) {
  auto t = BpeTokenizer::train({"ab ab ab abc"}, 260);
  using M = std::vector<BpeTokenizer::Merge>;
  EXPECT_EQ(t.merges(), (M{{97, 98}, {32, 256}, {257, 99}}));
  EXPECT_EQ(t.vocab_size(), 260);
  EXPECT_EQ(t.eot_id(), 259);
  EXPECT_EQ(t.token_bytes(258), " abc");
  EXPECT_EQ(t.encode("ab abc ab"), (std::vector<int32_t>{256, 258, 257}));
  EXPECT_EQ(t.encode("abab"), (std::vector<int32_t>{256, 256}));  // no pair (256,256) learned
  EXPECT_EQ(t.encode(" a"), (std::vector<int32_t>{32, 97}));
}

// Ties go to the smallest (left, right): "ab cd" -> words "ab", " cd", every pair count 1.
// (32,99) < (97,98) < (99,100) -> 256 = " c"; then (97,98) < (256,100) -> 257 = ab;
// then 258 = 256 d. Asking for more merges than pairs exist stops early.
TEST(BpeTokenizer, TiesBreakToSmallestPairAndTrainingStopsWhenNoPairsLeft) {
  auto t = BpeTokenizer::train({"ab cd"}, 300);
  using M = std::vector<BpeTokenizer::Merge>;
  EXPECT_EQ(t.merges(), (M{{32, 99}, {97, 98}, {256, 100}}));
  EXPECT_EQ(t.vocab_size(), 260);
  EXPECT_EQ(t.encode("ab cd"), (std::vector<int32_t>{257, 258}));
}

TEST(BpeTokenizer, RejectsVocabBelowBytesPlusEot) {
  try {
    BpeTokenizer::train({"x"}, 256);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[bpe_train]", 0), 0u) << e.what();
  }
  auto t = BpeTokenizer::train({"aaaa"}, 257);  // bytes + eot only
  EXPECT_TRUE(t.merges().empty());
  EXPECT_EQ(t.encode("aa"), (std::vector<int32_t>{97, 97}));
}

// Reference trainer: recount every pair of every word at every step (quadratic, obviously
// right), same tie rule. The incremental trainer must learn the same merges.
std::vector<BpeTokenizer::Merge> naive_train(const std::vector<std::string>& docs, int merges) {
  std::map<std::string, int64_t> freq;
  for (const auto& d : docs) {
    for (auto w : pretokenize(d)) ++freq[std::string(w)];
  }
  std::vector<std::pair<std::vector<int32_t>, int64_t>> words;
  for (const auto& [w, f] : freq) {
    std::vector<int32_t> s;
    for (unsigned char c : w) s.push_back(c);
    words.emplace_back(s, f);
  }
  std::vector<BpeTokenizer::Merge> out;
  for (int m = 0; m < merges; ++m) {
    std::map<std::pair<int32_t, int32_t>, int64_t> count;
    for (const auto& [s, f] : words) {
      for (size_t i = 0; i + 1 < s.size(); ++i) count[{s[i], s[i + 1]}] += f;
    }
    if (count.empty()) break;
    auto best = count.begin();  // std::map order: smallest pair wins ties
    for (auto it = count.begin(); it != count.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    const auto [a, b] = best->first;
    const int32_t id = 256 + m;
    for (auto& [s, f] : words) {
      std::vector<int32_t> n;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          n.push_back(id);
          ++i;
        } else {
          n.push_back(s[i]);
        }
      }
      s = n;
    }
    out.push_back(best->first);
  }
  return out;
}

// Encode by replaying merges in training order over each pre-tokenized word.
std::vector<int32_t> naive_encode(const std::vector<BpeTokenizer::Merge>& merges,
                                  const std::string& text) {
  std::vector<int32_t> out;
  for (auto w : pretokenize(text)) {
    std::vector<int32_t> s;
    for (unsigned char c : w) s.push_back(c);
    for (size_t m = 0; m < merges.size(); ++m) {
      std::vector<int32_t> n;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == merges[m].first && s[i + 1] == merges[m].second) {
          n.push_back(static_cast<int32_t>(256 + m));
          ++i;
        } else {
          n.push_back(s[i]);
        }
      }
      s = n;
    }
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

std::vector<std::string> corpus_slice(size_t n) {
  auto c = load_fortunes();
  if (!c.ok()) {
    // Synthetic fallback keeps the test meaningful without the package (corpus_test fails).
    std::vector<std::string> docs;
    for (uint64_t s = 0; s < n; ++s) docs.push_back(random_text(s, 200));
    return docs;
  }
  std::vector<std::string> docs;
  for (size_t i = 0; i < c->docs.size() && docs.size() < n; i += 37) docs.push_back(c->docs[i]);
  return docs;
}

TEST(BpeTokenizer, IncrementalTrainingEqualsNaiveRecount) {
  const auto docs = corpus_slice(120);
  const int merges = 150;
  auto t = BpeTokenizer::train(docs, 257 + merges);
  const auto want = naive_train(docs, merges);
  ASSERT_EQ(t.merges().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(t.merges()[i], want[i]) << "merge " << i;
  }
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(t.encode(docs[i]), naive_encode(want, docs[i]));
}

TEST(BpeTokenizer, RoundTripsArbitraryBytes) {
  const auto docs = corpus_slice(300);
  auto t = BpeTokenizer::train(docs, 600);
  EXPECT_EQ(t.vocab_size(), 600);
  size_t bytes = 0, tokens = 0;
  for (const auto& d : docs) {
    auto ids = t.encode(d);
    EXPECT_EQ(t.decode(ids), d);
    bytes += d.size();
    tokens += ids.size();
  }
  EXPECT_LT(tokens * 2, bytes);  // trained on these docs: well under half a token per byte
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const std::string s = seed % 2 ? random_bytes(seed, 500) : random_text(seed, 500);
    auto ids = t.encode(s);
    for (int32_t id : ids) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, t.eot_id());  // text never encodes to eot
    }
    EXPECT_EQ(t.decode(ids), s);
    EXPECT_EQ(t.encode(t.decode(ids)), ids);  // canonical sequences survive a round trip
  }
  // Any id sequence (non-canonical included) decodes to the concatenation of token bytes.
  uint64_t seed = 99;
  std::vector<int32_t> ids;
  std::string want;
  for (int i = 0; i < 200; ++i) {
    const auto id = static_cast<int32_t>(uniform_below(seed, t.eot_id()));
    ids.push_back(id);
    want += t.token_bytes(id);
  }
  EXPECT_EQ(t.decode(ids), want);
  EXPECT_EQ(t.decode(t.encode(want)), want);
  EXPECT_EQ(t.decode({t.eot_id()}), kEotText);
  EXPECT_THROW(t.decode({t.vocab_size()}), Error);
}

TEST(BpeTokenizer, FromMergesValidatesIds) {
  EXPECT_TRUE(BpeTokenizer::from_merges({{97, 98}, {256, 99}}).ok());
  EXPECT_EQ(BpeTokenizer::from_merges({{97, 256}}).status().code(),
            absl::StatusCode::kInvalidArgument);  // 256 not defined yet
  EXPECT_EQ(BpeTokenizer::from_merges({{-1, 3}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BpeTokenizer::from_merges({{97, 98}, {97, 98}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graft::data
