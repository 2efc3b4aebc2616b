// Hugging Face tokenizer.json (kind "hf") against ids recorded from the tokenizers package by
// tools/make_hf_tokenizer_vectors.py: a Llama-3-style tokenizer (Split + ByteLevel,
// ignore_merges, special tokens after the vocabulary), a GPT-2-style one (ByteLevel's regex,
// "a b" merges) and one with added-token flags (lstrip / rstrip / single_word / normalized,
// add_prefix_space). Every recorded text must encode to exactly the recorded ids, with special
// tokens parsed (encode_special) and kept as text (encode), and decode to the recorded text.
#include "data/hf_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "data/hf_split_patterns.h"
#include "data/rng.h"
#include "data/tokenizer.h"

namespace graft::data {
namespace {

using json = nlohmann::json;
constexpr char kDir[] = "tests/data/testdata/hf/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<HfTokenizer> load(const std::string& name) {
  auto t = HfTokenizer::load_json(kDir + name + ".json");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

// Checks every recorded case; returns how many there were.
size_t check_vectors(const Tokenizer& tok, const std::string& name, bool round_trips) {
  const json v = json::parse(read(kDir + name + ".vectors.json"));
  EXPECT_EQ(tok.vocab_size(), v["vocab_size"].get<int32_t>()) << name;
  EXPECT_EQ(tok.eot_id(), v["eot_id"].get<int32_t>()) << name;
  size_t n = 0;
  for (const json& c : v["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode_special(text), ids) << name << ": " << json(text).dump();
    EXPECT_EQ(tok.encode(text), c["ids_text"].get<std::vector<int32_t>>())
        << name << " (special tokens as text): " << json(text).dump();
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>())
        << name << ": " << json(text).dump();
    if (round_trips) {
      EXPECT_EQ(tok.decode(tok.encode(text)), text) << json(text).dump();
    }
    ++n;
  }
  return n;
}

TEST(HfTokenizer, Llama3StyleMatchesTokenizers) {
  auto tok = load("llama3_style");
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->kind(), "hf");
  EXPECT_EQ(tok->eot_token(), "<|end_of_text|>");
  EXPECT_EQ(tok->token_to_id("<|begin_of_text|>"), 1002);  // added after the 1002 vocab ids
  // ignore_merges: a vocabulary entry no merge reaches is still one token.
  EXPECT_EQ(tok->encode(" zqxj"), std::vector<int32_t>{tok->token_to_id("\xC4\xA0zqxj")});
  EXPECT_GT(check_vectors(*tok, "llama3_style", true), 250u);
}

TEST(HfTokenizer, Gpt2StyleWithStringMergesMatchesTokenizers) {
  auto tok = load("gpt2_style");
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->eot_token(), "<|endoftext|>");
  EXPECT_GT(check_vectors(*tok, "gpt2_style", true), 100u);
}

TEST(HfTokenizer, AddedTokenFlagsMatchTokenizers) {
  auto tok = load("flags");
  ASSERT_NE(tok, nullptr);
  // add_prefix_space and lstrip / rstrip change the text, so no round trip here.
  EXPECT_GT(check_vectors(*tok, "flags", false), 100u);
  const int32_t mask = tok->token_to_id("<mask>"), foo = tok->token_to_id("foo");
  ASSERT_GE(mask, 600);
  ASSERT_GE(foo, 600);
  // lstrip + rstrip: the spaces around <mask> belong to it; add_prefix_space gives each
  // remaining piece a leading space.
  const auto ids = tok->encode("a  <mask>  b");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), mask), 1);
  EXPECT_EQ(tok->decode(ids), " a<mask> b");
  // single_word: only where no word character touches it.
  auto has = [&](const std::string& s) {
    const auto v = tok->encode(s);
    return std::find(v.begin(), v.end(), foo) != v.end();
  };
  EXPECT_TRUE(has("a foo b"));
  EXPECT_FALSE(has("food"));
  EXPECT_FALSE(has("xfoo"));
  EXPECT_FALSE(
      has("\xC3\xA9"
          "foo"));  // é is \w
  EXPECT_TRUE(has("(foo)"));
}

TEST(HfTokenizer, SpecialTokensParseOnlyInEncodeSpecial) {
  auto tok = load("llama3_style");
  ASSERT_NE(tok, nullptr);
  const std::string text = "a<|end_of_text|>b";
  const auto parsed = tok->encode_special(text);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), tok->eot_id()), 1);
  const auto plain = tok->encode(text);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), tok->eot_id()), 0);
  EXPECT_GT(plain.size(), parsed.size());
  EXPECT_EQ(tok->decode(plain), text);
  EXPECT_EQ(tok->decode(parsed), text);
}

// Bytes that are not UTF-8 (which tokenizers never sees): each is one character of no class,
// encoded as its own byte, so every byte string round-trips.
TEST(HfTokenizer, InvalidUtf8IsOneOtherCharacterPerByteAndRoundTrips) {
  auto pieces = [](std::string_view s, SplitPattern p) {
    std::vector<std::string_view> out;
    split_with_pattern(s, p, out);
    return std::vector<std::string>(out.begin(), out.end());
  };
  using V = std::vector<std::string>;
  for (SplitPattern p : {SplitPattern::kGpt2, SplitPattern::kLlama3}) {
    // Like punctuation: "ab!cd" splits as "ab" + "!cd" (Llama 3) or "ab" + "!" + "cd" (GPT-2).
    const V valid = pieces("ab!cd", p);
    V invalid = pieces(
        "ab\xFF"
        "cd",
        p);
    for (auto& s : invalid) std::replace(s.begin(), s.end(), '\xFF', '!');
    EXPECT_EQ(invalid, valid);
    EXPECT_EQ(pieces("\xE4\xB8", p), (V{"\xE4\xB8"}));    // a truncated character: two others
    EXPECT_EQ(pieces(" \xC0\x80", p), (V{" \xC0\x80"}));  // overlong NUL
  }
  for (const char* name : {"llama3_style", "gpt2_style"}) {
    auto tok = load(name);
    ASSERT_NE(tok, nullptr);
    for (uint64_t seed = 0; seed < 40; ++seed) {
      uint64_t state = seed;
      std::string s(1 + seed * 13, '\0');
      for (auto& c : s) c = static_cast<char>(splitmix64(state) & 0xFF);
      EXPECT_EQ(tok->decode(tok->encode(s)), s) << name << " seed " << seed;
      EXPECT_EQ(tok->decode(tok->encode_special(s)), s);
    }
    // A lone surrogate's bytes (ED A0 80) are three invalid bytes, not a character.
    const std::string surrogate = "x\xED\xA0\x80y";
    EXPECT_EQ(tok->decode(tok->encode(surrogate)), surrogate);
  }
}

TEST(HfTokenizer, SaveAndLoadTokenizerGiveTheSameTokenizer) {
  auto tok = HfTokenizer::load_json(std::string(kDir) + "llama3_style.json", "<|eot_id|>");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->eot_id(), (*tok)->token_to_id("<|eot_id|>"));
  const std::string path = ::testing::TempDir() + "/hf_saved.txt";
  ASSERT_TRUE((*tok)->save(path).ok());
  auto back = load_tokenizer(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->kind(), "hf");
  EXPECT_EQ((*back)->eot_id(), (*tok)->eot_id());
  EXPECT_EQ((*back)->vocab_size(), (*tok)->vocab_size());
  const std::string text = "Don't panic!  \xE6\x97\xA5\xE6\x9C\xAC <|eot_id|> 12345\n";
  EXPECT_EQ((*back)->encode(text), (*tok)->encode(text));
  EXPECT_EQ((*back)->encode_special(text), (*tok)->encode_special(text));

  // Truncated or altered saved files are DataLoss naming the file.
  const std::string saved = read(path);
  for (const std::string& bad : std::vector<std::string>{
           saved.substr(0, saved.size() / 2), saved + "x", "graft-hf 1\neot 7\njson 2\n{}\nend\n",
           "graft-hf 1\neot \"x\"\njson 2z\n{}\nend\n"}) {
    const std::string p = ::testing::TempDir() + "/hf_bad.txt";
    std::ofstream(p, std::ios::binary) << bad;
    auto r = load_tokenizer(p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
    EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status();
  }
}

TEST(HfTokenizer, EncodesConcurrently) {
  auto tok = load("llama3_style");
  ASSERT_NE(tok, nullptr);
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i) {
    texts.push_back("Document " + std::to_string(i) + ": it's " + std::string(i % 5, ' ') +
                    "caf\xC3\xA9 \xF0\x9F\x91\x8D " + std::to_string(i * 7919));
  }
  std::vector<std::vector<int32_t>> want;
  for (const auto& t : texts) want.push_back(tok->encode(t));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      for (int r = 0; r < 50; ++r) {
        const size_t i = (w * 17 + r) % texts.size();
        if (tok->encode(texts[i]) != want[i]) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(HfTokenizer, DecodeRejectsIdsOutsideTheVocabulary) {
  auto tok = load("gpt2_style");
  ASSERT_NE(tok, nullptr);
  try {
    tok->decode({1, tok->vocab_size()});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[decode]", 0), 0u) << e.what();
  }
  EXPECT_THROW(tok->decode({-1}), Error);
}

}  // namespace
}  // namespace graft::data
