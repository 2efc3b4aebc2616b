// BPE training with incremental pair counts (see bpe.h for the contract).
#include <algorithm>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "data/bpe.h"
#include "data/pretokenize.h"

namespace graft::data {
namespace {

uint64_t key_of(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct Word {
  std::vector<int32_t> sym;
  int64_t freq;
};

struct Entry {
  int64_t count;
  uint64_t key;
};
// Max-heap order: larger count first; among equal counts the smaller (left, right) pair.
struct EntryLess {
  bool operator()(const Entry& x, const Entry& y) const {
    if (x.count != y.count) return x.count < y.count;
    return x.key > y.key;
  }
};

}  // namespace

BpeTokenizer BpeTokenizer::train(const std::vector<std::string>& docs, int32_t vocab_size) {
  if (vocab_size < 257) fail("bpe_train", "vocab_size ", vocab_size, " < 257 (256 bytes + eot)");
  const int64_t target = static_cast<int64_t>(vocab_size) - 257;

  // Distinct words and their frequencies, in byte order so everything below is deterministic.
  std::unordered_map<std::string_view, int64_t> freq;
  for (const auto& d : docs) {
    for (std::string_view w : pretokenize(d)) ++freq[w];
  }
  std::vector<std::pair<std::string_view, int64_t>> table(freq.begin(), freq.end());
  std::sort(table.begin(), table.end());
  std::vector<Word> words;
  words.reserve(table.size());
  for (const auto& [w, f] : table) {
    Word word{std::vector<int32_t>(w.size()), f};
    for (size_t i = 0; i < w.size(); ++i) word.sym[i] = static_cast<unsigned char>(w[i]);
    words.push_back(std::move(word));
  }

  std::unordered_map<uint64_t, int64_t> count;
  std::unordered_map<uint64_t, std::vector<int32_t>> where;  // may hold stale word indices
  for (int32_t w = 0; w < static_cast<int32_t>(words.size()); ++w) {
    const auto& s = words[w].sym;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      const uint64_t k = key_of(s[i], s[i + 1]);
      count[k] += words[w].freq;
      auto& list = where[k];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  }
  std::priority_queue<Entry, std::vector<Entry>, EntryLess> heap;
  for (const auto& [k, c] : count) heap.push({c, k});

  std::vector<Merge> merges;
  std::vector<uint64_t> grown;
  while (static_cast<int64_t>(merges.size()) < target && !heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    auto cit = count.find(top.key);
    const int64_t cur = cit == count.end() ? 0 : cit->second;
    // Counts of existing pairs only fall, so a stale entry is re-queued at its true count.
    if (cur != top.count) {
      if (cur > 0) heap.push({cur, top.key});
      continue;
    }
    const auto a = static_cast<int32_t>(top.key >> 32);
    const auto b = static_cast<int32_t>(top.key & 0xFFFFFFFFu);
    const auto id = static_cast<int32_t>(256 + merges.size());
    merges.emplace_back(a, b);

    std::vector<int32_t> list = std::move(where[top.key]);
    where.erase(top.key);
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    grown.clear();
    for (int32_t w : list) {
      auto& s = words[w].sym;
      const int64_t f = words[w].freq;
      bool has = false;
      for (size_t i = 0; i + 1 < s.size() && !has; ++i) has = s[i] == a && s[i + 1] == b;
      if (!has) continue;  // stale: an earlier merge consumed the pair in this word
      // Words are short: take the word's pairs out, merge, put the new pairs back.
      for (size_t i = 0; i + 1 < s.size(); ++i) count[key_of(s[i], s[i + 1])] -= f;
      size_t o = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          s[o++] = id;
          ++i;
        } else {
          s[o++] = s[i];
        }
      }
      s.resize(o);
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        const uint64_t k = key_of(s[i], s[i + 1]);
        count[k] += f;
        if (s[i] == id || s[i + 1] == id) {  // only pairs with the new id can grow
          auto& l = where[k];
          if (l.empty() || l.back() != w) l.push_back(w);
          grown.push_back(k);
        }
      }
    }
    count.erase(top.key);
    std::sort(grown.begin(), grown.end());
    grown.erase(std::unique(grown.begin(), grown.end()), grown.end());
    for (uint64_t k : grown) heap.push({count[k], k});
  }
  return BpeTokenizer(std::move(merges));
}

}  // namespace graft::data
