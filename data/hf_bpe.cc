#include "data/hf_bpe.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "data/rng.h"
#include "data/unicode_classes.h"

namespace graft::data {
namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

bool printable(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct ByteLevelTables {
  char32_t to_char[256];
  int16_t to_byte[512];  // byte-level characters are all below U+0200
};

const ByteLevelTables& tables() {
  static const ByteLevelTables t = [] {
    ByteLevelTables t{};
    for (auto& b : t.to_byte) b = -1;
    unsigned n = 0;
    for (unsigned b = 0; b < 256; ++b) {
      t.to_char[b] = printable(b) ? b : 256 + n++;
      t.to_byte[t.to_char[b]] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return t;
}

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else {  // byte-level characters are below U+0800
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace

char32_t byte_level_char(unsigned char b) { return tables().to_char[b]; }

int byte_of_byte_level_char(char32_t c) { return c < 512 ? tables().to_byte[c] : -1; }

bool byte_level_to_bytes(std::string_view s, std::string& out) {
  std::string bytes;
  for (size_t i = 0; i < s.size();) {
    const unicode::Char c = unicode::decode_utf8(s, i);
    const int b = c.cp == unicode::kInvalid ? -1 : byte_of_byte_level_char(c.cp);
    if (b < 0) return false;
    bytes.push_back(static_cast<char>(b));
    i += c.len;
  }
  out += bytes;
  return true;
}

absl::StatusOr<HfBpeModel> HfBpeModel::create(
    const std::vector<std::pair<std::string, int32_t>>& vocab, const std::vector<Merge>& merges,
    bool ignore_merges) {
  HfBpeModel m;
  m.ignore_merges_ = ignore_merges;
  for (const auto& [token, id] : vocab) m.vocab_[token] = id;  // a repeated key: the last wins
  m.entries_ = static_cast<int64_t>(m.vocab_.size());
  for (const auto& [token, id] : m.vocab_) {
    std::string bytes;
    if (byte_level_to_bytes(token, bytes)) m.bytes_to_id_.emplace(std::move(bytes), id);
  }
  for (unsigned b = 0; b < 256; ++b) {
    std::string ch;
    append_utf8(byte_level_char(static_cast<unsigned char>(b)), ch);
    auto it = m.vocab_.find(ch);
    if (it == m.vocab_.end()) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      return absl::InvalidArgumentError(
          std::string("model.vocab lacks the byte-level character '") + ch + "' of byte " + hex +
          " (a byte-level BPE vocabulary holds all 256)");
    }
    m.byte_id_[b] = it->second;
  }
  m.merges_.reserve(merges.size());
  for (size_t k = 0; k < merges.size(); ++k) {
    const auto& [a, b] = merges[k];
    const auto ia = m.vocab_.find(a), ib = m.vocab_.find(b), iab = m.vocab_.find(a + b);
    for (const auto& [it, what] : {std::pair{ia, a}, std::pair{ib, b}, std::pair{iab, a + b}}) {
      if (it == m.vocab_.end()) {
        return absl::InvalidArgumentError("merge " + std::to_string(k) + " ('" + a + "', '" + b +
                                          "'): '" + what + "' is not in model.vocab");
      }
    }
    // As tokenizers collects the merges into a map, a repeated pair keeps its last rank.
    m.merges_.set(pair_key(ia->second, ib->second), {static_cast<uint32_t>(k), iab->second});
  }
  return m;
}

void HfBpeModel::MergeTable::reserve(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  keys_.assign(cap, kEmpty);
  values_.assign(cap, {});
  size_ = 0;
}

void HfBpeModel::MergeTable::set(uint64_t key, MergeTarget m) {
  if (2 * (size_ + 1) > keys_.size()) {  // keep at most half full
    std::vector<uint64_t> keys = std::move(keys_);
    std::vector<MergeTarget> values = std::move(values_);
    reserve(std::max<size_t>(size_ + 1, keys.size()));
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != kEmpty) set(keys[i], values[i]);
    }
  }
  const size_t mask = keys_.size() - 1;
  for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
    if (keys_[i] == kEmpty) {
      keys_[i] = key;
      values_[i] = m;
      ++size_;
      return;
    }
    if (keys_[i] == key) {
      values_[i] = m;
      return;
    }
  }
}

const HfBpeModel::MergeTarget* HfBpeModel::MergeTable::find(uint64_t key) const {
  if (keys_.empty()) return nullptr;
  const size_t mask = keys_.size() - 1;
  for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
    if (keys_[i] == key) return &values_[i];
    if (keys_[i] == kEmpty) return nullptr;
  }
}

int32_t HfBpeModel::token_to_id(const std::string& token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

void HfBpeModel::merge_all(std::vector<int32_t>& ids) const {
  struct Symbol {
    int32_t c, prev, next, len;
  };
  struct Candidate {
    uint32_t rank, pos;
    int32_t id;
    // priority_queue pops the largest: the smallest rank, then the smallest position.
    bool operator<(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  const int32_t n = static_cast<int32_t>(ids.size());
  std::vector<Symbol> sym(ids.size());
  for (int32_t i = 0; i < n; ++i) sym[i] = {ids[i], i - 1, i + 1 < n ? i + 1 : -1, 1};
  auto find = [&](int32_t a, int32_t b) { return merges_.find(pair_key(a, b)); };
  std::priority_queue<Candidate> queue;
  for (int32_t i = 0; i + 1 < n; ++i) {
    if (const MergeTarget* m = find(sym[i].c, sym[i + 1].c)) {
      queue.push({m->rank, static_cast<uint32_t>(i), m->id});
    }
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& cur = sym[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;  // merged away, or nothing on its right
    const Symbol right = sym[cur.next];
    const MergeTarget* m = find(cur.c, right.c);
    if (m == nullptr || m->id != top.id) continue;  // the symbols here changed since
    sym[cur.next].len = 0;
    cur.c = top.id;
    cur.len += right.len;
    cur.next = right.next;
    if (right.next >= 0) sym[right.next].prev = static_cast<int32_t>(top.pos);
    if (cur.prev >= 0) {
      if (const MergeTarget* p = find(sym[cur.prev].c, cur.c)) {
        queue.push({p->rank, static_cast<uint32_t>(cur.prev), p->id});
      }
    }
    if (cur.next >= 0) {
      if (const MergeTarget* q = find(cur.c, sym[cur.next].c)) {
        queue.push({q->rank, top.pos, q->id});
      }
    }
  }
  ids.clear();
  for (const Symbol& s : sym) {
    if (s.len != 0) ids.push_back(s.c);
  }
}

void HfBpeModel::encode_piece(std::string_view bytes, std::vector<int32_t>& out) const {
  if (ignore_merges_) {
    auto it = bytes_to_id_.find(bytes);
    if (it != bytes_to_id_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<int32_t> ids(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) ids[i] = byte_id_[static_cast<unsigned char>(bytes[i])];
  merge_all(ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

}  // namespace graft::data
