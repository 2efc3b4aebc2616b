// The BPE model of a Hugging Face byte-level tokenizer.json ("model": {"type": "BPE", ...}),
// applied to the raw bytes of one pre-tokenized piece.
//
// The vocabulary's strings are in the byte-level alphabet (byte_level_char: GPT-2's
// bytes_to_unicode, e.g. U+0120 'Ġ' for a space); merges are pairs of such strings, ranked by
// their order. Encoding follows tokenizers' BPE::merge_word / Word::merge_all exactly: one
// symbol per byte, then a priority queue of adjacent pairs ordered by (merge rank, position)
// pops the best pair, skips it if the symbols there changed, merges it into vocab[a + b] and
// queues the pairs it forms with its neighbours. With ignore_merges, a piece that is itself in
// the vocabulary is that one token. No cache: a piece costs O(n log n) in its bytes, whatever
// the input, and memory stays what the tables take.
#pragma once

#include <cstdint>
#include <functional>
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

  // Appends the ids of one pre-tokenized piece (raw bytes, non-empty). Thread-safe (const).
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
  // (a << 32 | b) -> merge, open addressing with linear probing (the hot lookup of encoding).
  class MergeTable {
   public:
    void reserve(size_t n);
    void set(uint64_t key, MergeTarget m);  // replaces an earlier value
    const MergeTarget* find(uint64_t key) const;

   private:
    static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids < 2^31: no pair has this key
    std::vector<uint64_t> keys_;
    std::vector<MergeTarget> values_;
    size_t size_ = 0;
  };
  // Heterogeneous lookup: find(std::string_view) without building a std::string.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using BytesMap = std::unordered_map<std::string, int32_t, Hash, std::equal_to<>>;

  std::unordered_map<std::string, int32_t> vocab_;  // byte-level string -> id
  BytesMap bytes_to_id_;                            // raw bytes -> id (ignore_merges)
  MergeTable merges_;
  int32_t byte_id_[256] = {};
  int64_t entries_ = 0;
  bool ignore_merges_ = false;
};

}  // namespace graft::data
