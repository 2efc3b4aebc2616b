// A Hugging Face tokenizer.json with a byte-level BPE model (the GPT-2 / Llama 3 family),
// encoding and decoding as the tokenizers package does (data/hf_tokenizer_json.h lists what is
// read and what is refused). Kind "hf".
//
// encode(text) treats special added tokens written in the text as ordinary text, so it never
// produces eot or another special id from text: tokenizers'
// encode(text, add_special_tokens=False) with encode_special_tokens=True. Added tokens that are
// not special are still cut out of the text, as tokenizers does. encode_special(text) parses
// special tokens too: tokenizers' default encode(text, add_special_tokens=False). Neither adds
// the post-processor's template tokens (a Llama 3 BOS): prepare appends eot after each document.
//
// decode(ids) is tokenizers' decode(ids, skip_special_tokens=False), except that the bytes are
// returned as they are where tokenizers replaces bytes that are not UTF-8 by U+FFFD (ids that
// split a character).
//
// Text is bytes. Valid UTF-8 encodes exactly as tokenizers encodes the same Python str. A byte
// that is not well-formed UTF-8 (tokenizers cannot be given one) is one character of no
// Unicode class (like punctuation) that byte-level BPE encodes as that byte, so
// decode(encode(s)) == s for every byte string s, unless an added token with lstrip / rstrip
// absorbs whitespace, or ByteLevel's add_prefix_space adds a space (both as in tokenizers).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "data/hf_added_tokens.h"
#include "data/hf_bpe.h"
#include "data/hf_tokenizer_json.h"
#include "data/tokenizer.h"

namespace graft::data {

// Names tried, in order, when no end-of-text token is named.
inline constexpr const char* kHfEotNames[] = {"<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>"};

class HfTokenizer final : public Tokenizer {
 public:
  // Reads a tokenizer.json. eot_token: the end-of-text token's content; "" = the first of
  // kHfEotNames in the tokenizer. NotFound if the file is missing; InvalidArgument for a
  // malformed or unsupported file, or no such end-of-text token.
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> load_json(const std::string& path,
                                                                const std::string& eot_token = "");
  // The same from the file's text; `where` names it in errors.
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> from_json(std::string json_text,
                                                                const std::string& where,
                                                                const std::string& eot_token);

  std::vector<int32_t> encode(std::string_view text) const override;
  std::vector<int32_t> encode_special(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  int32_t eot_id() const override { return eot_id_; }
  std::string kind() const override { return "hf"; }
  // "graft-hf 1", the eot token, then the tokenizer.json text unchanged.
  absl::Status save(const std::string& path) const override;

  const std::string& eot_token() const { return eot_token_; }
  const std::string& json_text() const { return json_text_; }  // the tokenizer.json read
  // The id of an added token's content or of a model vocabulary string, or -1.
  int32_t token_to_id(const std::string& token) const;

 private:
  HfTokenizer(HfTokenizerSpec spec, HfBpeModel model, std::string json_text);
  void encode_into(std::string_view text, bool parse_special, std::vector<int32_t>& out) const;
  void encode_plain(std::string_view text, std::vector<int32_t>& out) const;

  std::vector<HfPreTokenizerStep> pre_tokenizer_;
  HfBpeModel model_;
  std::unordered_map<std::string, int32_t> added_ids_;  // content -> id
  AddedTokenMatcher raw_matcher_;         // normalized = false: matched on the whole text first
  AddedTokenMatcher normalized_matcher_;  // normalized = true: then on the pieces in between
  // What decode writes for id i: decode_bytes_[decode_offsets_[i], decode_offsets_[i + 1])
  // (empty for an id that names no token, as tokenizers skips those).
  std::string decode_bytes_;
  std::vector<uint64_t> decode_offsets_;
  std::string json_text_;
  std::string eot_token_;
  int32_t vocab_size_ = 0;
  int32_t eot_id_ = -1;
};

// Parses the text that HfTokenizer::save writes (exposed so load_tokenizer can dispatch).
absl::StatusOr<std::unique_ptr<HfTokenizer>> parse_hf_saved(std::string text,
                                                            const std::string& path);

}  // namespace graft::data
