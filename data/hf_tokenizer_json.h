// Reading a Hugging Face tokenizer.json into what graft's byte-level BPE needs, refusing every
// feature it does not implement with an InvalidArgument that names it (never a silent
// mis-encode).
//
// Accepted:
//   model          {"type": "BPE"} with vocab, merges as "a b" strings or ["a", "b"] pairs,
//                  ignore_merges; dropout null or 0; continuing_subword_prefix and
//                  end_of_word_suffix null or ""; unk_token / byte_fallback / fuse_unk are
//                  accepted and unused, since all 256 byte-level characters must be in vocab
//   normalizer     null
//   pre_tokenizer  ByteLevel (add_prefix_space, use_regex: GPT-2's regex), or a Sequence of
//                  Split steps (Regex pattern GPT-2's or Llama 3's, behavior Isolated, invert
//                  false) followed by one ByteLevel
//   decoder        ByteLevel
//   added_tokens   content, special, single_word, lstrip, rstrip, normalized; the ids are
//                  assigned as tokenizers assigns them on load (the id in the file is not used,
//                  as in tokenizers)
//   truncation     null (graft encodes whole documents)
//   padding, post_processor: ignored (batches; graft adds no template tokens, prepare appends
//                  the end-of-text id after each document)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "data/hf_added_tokens.h"
#include "data/hf_split_patterns.h"

namespace graft::data {

// Vocabulary ids are below this, and so are the added tokens' count: ids stay below 2^25.
inline constexpr int64_t kMaxHfIds = int64_t{1} << 24;

struct HfPreTokenizerStep {
  enum Kind { kSplit, kByteLevel } kind = kByteLevel;
  SplitPattern pattern = SplitPattern::kGpt2;  // kSplit
  bool add_prefix_space = false;               // kByteLevel
  bool use_regex = true;                       // kByteLevel: split with GPT-2's regex
};

struct HfTokenizerSpec {
  std::vector<std::pair<std::string, int32_t>> vocab;       // byte-level strings
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  bool ignore_merges = false;
  std::vector<HfAddedToken> added_tokens;  // in file order; ids not yet assigned
  std::vector<HfPreTokenizerStep> pre_tokenizer;
};

// `where` names the source in errors (a path).
absl::StatusOr<HfTokenizerSpec> parse_hf_tokenizer_json(std::string_view json_text,
                                                        const std::string& where);

}  // namespace graft::data
