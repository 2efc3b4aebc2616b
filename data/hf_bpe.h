// The BPE model of a Hugging Face byte-level tokenizer.json ("model": {"type": "BPE", ...}),
// applied to the raw bytes of one pre-tokenized piece.
//
// The vocabulary's strings are in the byte-level alphabet (byte_level_char: GPT-2's
// bytes_to_unicode, e.g. U+0120 'Ġ' for a space); merges are pairs of such strings, ranked by
// their order. Encoding follows tokenizers' BPE::merge_word / Word::merge_all exactly: one
// symbol per byte, then a priority queue of adjacent pairs ordered by (merge rank, position)
// pops the best pair, skips it if the symbols there changed, merges it into vocab[a + b] and
// queues the pairs it forms with its neighbours. With ignore_merges, a piece that is itself in
// the vocabulary is that one token.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace graft::data {

// GPT-2's bytes_to_unicode: the printable byte b maps to U+00b, the others to U+0100 + k.
char32_t byte_level_char(unsigned char b);
// The byte a byte-level character stands for, or -1 if it is not one of the 256.
int byte_of_byte_level_char(char32_t c);
// The bytes a byte-level string stands for; false (out unchanged) if a character of s is not in
// the byte-level alphabet or s is not valid UTF-8.
bool byte_level_to_bytes(std::string_view s, std::string& out);

class HfBpeModel {
 public:
  using Merge = std::pair<std::string, std::string>;

  // InvalidArgument when a merge names a string missing from the vocabulary (a, b or a + b),
  // or when one of the 256 byte-level characters is missing (tokenizers would drop such bytes
  // silently).
  static absl::StatusOr<HfBpeModel> create(
      const std::vector<std::pair<std::string, int32_t>>& vocab, const std::vector<Merge>& merges,
      bool ignore_merges);

  HfBpeModel(HfBpeModel&& other) noexcept;
  HfBpeModel& operator=(HfBpeModel&&) = delete;

  // Appends the ids of one pre-tokenized piece (raw bytes, non-empty). Thread-safe.
  void encode_piece(std::string_view bytes, std::vector<int32_t>& out) const;

  int64_t entries() const { return entries_; }  // vocabulary entries (tokenizers' vocab size)
  // The id of a vocabulary string (byte-level form), or -1.
  int32_t token_to_id(const std::string& token) const;
  // Every (string, id) of the vocabulary.
  const std::unordered_map<std::string, int32_t>& vocab() const { return vocab_; }

 private:
  HfBpeModel() = default;
  void merge_all(std::vector<int32_t>& symbols) const;

  struct MergeTarget {
    uint32_t rank;
    int32_t id;
  };
  std::unordered_map<std::string, int32_t> vocab_;        // byte-level string -> id
  std::unordered_map<std::string, int32_t> bytes_to_id_;  // raw bytes -> id (ignore_merges)
  std::unordered_map<uint64_t, MergeTarget> merges_;      // (a << 32 | b) -> rank, a + b
  int32_t byte_id_[256] = {};
  int64_t entries_ = 0;
  bool ignore_merges_ = false;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace graft::data
