// Byte-level BPE (GPT-2 style): ids 0..255 are bytes, 256 + k is the k-th learned merge,
// and the last id (vocab_size - 1) is eot. Merges never cross pre-tokenized words
// (data/pretokenize.h), so text with spaces encodes as words with their leading space.
//
// Training keeps pair counts over the table of distinct words and their frequencies and
// updates them incrementally after each merge (only words that contain the merged pair are
// touched), with a max-heap of pairs whose stale entries are refreshed on pop. Ties between
// equal counts go to the smallest (left id, right id), so training is deterministic.
// Encoding applies merges by rank inside each word; words are cached.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tokenizer.h"

namespace graft::data {

class BpeTokenizer final : public Tokenizer {
 public:
  using Merge = std::pair<int32_t, int32_t>;

  // Learns vocab_size - 257 merges from docs (vocab_size >= 257; 257 means bytes + eot only).
  // Stops early when no adjacent pair is left in any word: vocab_size() is then smaller than
  // asked. Throws graft::Error "[bpe_train]" for vocab_size < 257.
  static BpeTokenizer train(const std::vector<std::string>& docs, int32_t vocab_size);
  // From an explicit merge list; InvalidArgument if a merge names an id not yet defined.
  static absl::StatusOr<BpeTokenizer> from_merges(std::vector<Merge> merges);
  static absl::StatusOr<BpeTokenizer> load(const std::string& path);

  BpeTokenizer(const BpeTokenizer& other);
  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer other) noexcept;

  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(256 + merges_.size() + 1); }
  int32_t eot_id() const override { return vocab_size() - 1; }
  std::string kind() const override { return "bpe"; }
  absl::Status save(const std::string& path) const override;

  const std::vector<Merge>& merges() const { return merges_; }
  const std::string& token_bytes(int32_t id) const;  // the bytes of a non-eot id

 private:
  explicit BpeTokenizer(std::vector<Merge> merges);
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  std::vector<Merge> merges_;
  std::vector<std::string> bytes_;              // per id (eot: empty)
  std::unordered_map<uint64_t, int32_t> rank_;  // (left << 32 | right) -> merge index
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

// Parses the text format that save() writes (exposed so load_tokenizer can dispatch).
absl::StatusOr<BpeTokenizer> parse_bpe(const std::string& text, const std::string& path);

}  // namespace graft::data
