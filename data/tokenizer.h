// Tokenizers: text bytes <-> int32 ids. Every tokenizer has an end-of-text id (eot_id()),
// which prepare appends after each document; encode never produces it, or any other special
// token, from text (special tokens written in the text are encoded as ordinary text), so a
// document's tokens never hold a document boundary.
//
// Contract: decode(encode(s)) == s for every byte string s (UTF-8 or not) for the byte and bpe
// kinds; the hf kind (data/hf_tokenizer.h) keeps it except where the tokenizer.json itself
// drops or adds whitespace (added tokens with lstrip / rstrip, ByteLevel add_prefix_space).
// encode_special(s) parses special tokens out of the text (the hf kind; the others have none to
// parse and encode as encode does). decode renders eot as its text (kEotText for byte and bpe).
// Ids outside [0, vocab_size()) throw graft::Error "[decode] ...".
// Tokenizers are immutable after construction and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graft::data {

inline constexpr char kEotText[] = "<|endoftext|>";

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  virtual std::vector<int32_t> encode_special(std::string_view text) const { return encode(text); }
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t vocab_size() const = 0;  // ids are in [0, vocab_size), eot included
  virtual int32_t eot_id() const = 0;
  virtual std::string kind() const = 0;  // "byte", "bpe" or "hf"
  // Text file, written atomically (data/atomic_file.h); load_tokenizer reads it back
  // whatever the kind.
  virtual absl::Status save(const std::string& path) const = 0;
};

// Ids 0..255 are the bytes, 256 is eot.
class ByteTokenizer final : public Tokenizer {
 public:
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return 257; }
  int32_t eot_id() const override { return 256; }
  std::string kind() const override { return "byte"; }
  absl::Status save(const std::string& path) const override;
};

// Reads a file written by any tokenizer's save(): NotFound when missing, DataLoss /
// InvalidArgument (with the line) when truncated or corrupt.
absl::StatusOr<std::unique_ptr<Tokenizer>> load_tokenizer(const std::string& path);

}  // namespace graft::data
