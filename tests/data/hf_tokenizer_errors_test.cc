// Hugging Face tokenizer.json files that graft cannot encode exactly are errors that name the
// file and the feature (never a silent mis-encode): other models, normalizers, pre-tokenizers,
// regexes, decoders, truncation, dropout, subword affixes; broken vocabularies and merges;
// malformed JSON; a missing file; no end-of-text token.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/hf_tokenizer.h"

namespace graft::data {
namespace {

using json = nlohmann::json;

json llama3_style() {
  std::ifstream in("tests/data/testdata/hf/llama3_style.json");
  EXPECT_TRUE(in);
  return json::parse(in);
}

absl::Status load_edited(const std::function<void(json&)>& edit, const std::string& eot = "") {
  json j = llama3_style();
  edit(j);
  return HfTokenizer::from_json(j.dump(), "edited.json", eot).status();
}

void expect_error(const absl::Status& s, std::vector<std::string> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  parts.push_back("edited.json");
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << p << " in " << s;
}

TEST(HfTokenizerErrors, UnsupportedFeaturesNameTheFeature) {
  struct Case {
    std::function<void(json&)> edit;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["model"]["type"] = "WordPiece"; }, {"model.type", "WordPiece"}},
      {[](json& j) { j["model"]["type"] = "Unigram"; }, {"Unigram", "not supported"}},
      {[](json& j) {
         j["normalizer"] = {{"type", "NFC"}};
       },
       {"normalizer", "NFC"}},
      {[](json& j) {
         j["pre_tokenizer"] = {{"type", "Metaspace"}};
       },
       {"Metaspace"}},
      {[](json& j) { j["pre_tokenizer"] = nullptr; }, {"null pre_tokenizer"}},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+"; },
       {"Split regex", "\\\\w+"}},
      {[](json& j) {
         j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"String", " "}};
       },
       {"Split pattern"}},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"; },
       {"behavior", "Removed"}},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["invert"] = true; }, {"invert"}},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); }, {"end with ByteLevel"}},
      {[](json& j) {
         auto& steps = j["pre_tokenizer"]["pretokenizers"];
         steps.push_back(steps[0]);
       },
       {"after ByteLevel"}},
      {[](json& j) { j["decoder"] = nullptr; }, {"decoder"}},
      {[](json& j) {
         j["decoder"] = {{"type", "WordPiece"}};
       },
       {"decoder", "WordPiece"}},
      {[](json& j) {
         j["truncation"] = {{"max_length", 8}};
       },
       {"truncation"}},
      {[](json& j) { j["model"]["dropout"] = 0.1; }, {"dropout"}},
      {[](json& j) { j["model"]["continuing_subword_prefix"] = "##"; },
       {"continuing_subword_prefix"}},
      {[](json& j) { j["model"]["end_of_word_suffix"] = "</w>"; }, {"end_of_word_suffix"}},
      {[](json& j) { j["version"] = "2.0"; }, {"version"}},
  };
  for (const Case& c : cases) expect_error(load_edited(c.edit), c.parts);
}

TEST(HfTokenizerErrors, BrokenVocabulariesAndMerges) {
  expect_error(load_edited([](json& j) { j["model"]["vocab"].erase("a"); }),
               {"byte-level character 'a'", "0x61"});
  expect_error(load_edited([](json& j) {
                 j["model"]["merges"].push_back({"zz", "q"});
               }),
               {"merge 744", "'zz' is not in model.vocab"});
  expect_error(load_edited([](json& j) { j["model"]["merges"].push_back("a b c"); }),
               {"model.merges[744]", "exactly one space"});
  expect_error(load_edited([](json& j) { j["model"]["merges"].push_back(7); }),
               {"model.merges[744]"});
  expect_error(load_edited([](json& j) { j["model"]["vocab"]["zz"] = -3; }), {"model.vocab"});
  expect_error(load_edited([](json& j) { j["model"]["vocab"]["zz"] = 1 << 30; }),
               {"model.vocab[\"zz\"]", "2^24"});
  expect_error(load_edited([](json& j) { j["added_tokens"][0]["content"] = 5; }),
               {"added_tokens[0].content"});
  expect_error(load_edited([](json& j) { j["added_tokens"][1]["special"] = "yes"; }),
               {"added_tokens[1].special"});
}

TEST(HfTokenizerErrors, EndOfTextTokenMustExist) {
  // None of the usual names: the error lists them and says how to name one.
  expect_error(load_edited([](json& j) { j["added_tokens"].erase(1); }),
               {"no end-of-text token", "<|end_of_text|>", "training.tokenizer_eot"});
  expect_error(load_edited([](json&) {}, "<|nope|>"), {"<|nope|>", "not in the tokenizer"});
  EXPECT_TRUE(load_edited([](json&) {}, "<|eot_id|>").ok());
}

TEST(HfTokenizerErrors, MalformedOrMissingFiles) {
  auto s = HfTokenizer::from_json("{\"model\": ", "edited.json", "").status();
  expect_error(s, {"not valid JSON"});
  expect_error(HfTokenizer::from_json("[1, 2]", "edited.json", "").status(), {"expected"});
  auto missing = HfTokenizer::load_json("/nonexistent/tokenizer.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/tokenizer.json"), std::string::npos);
}

}  // namespace
}  // namespace graft::data
