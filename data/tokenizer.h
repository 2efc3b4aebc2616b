// Tokenizers: text bytes <-> int32 ids. Every tokenizer has an end-of-text id (eot_id()),
// which prepare appends after each document; encode never produces it from text (no special
// token is parsed out of text, so any byte string encodes and decodes exactly).
//
// Contract: decode(encode(s)) == s for every byte string s (UTF-8 or not). decode renders
// eot as kEotText. Ids outside [0, vocab_size()) throw graft::Error "[decode] ...".
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
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t vocab_size() const = 0;  // ids are in [0, vocab_size), eot included
  virtual int32_t eot_id() const = 0;
  virtual std::string kind() const = 0;  // "byte" or "bpe"
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
