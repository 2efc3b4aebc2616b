#include "data/bpe.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "data/atomic_file.h"
#include "data/pretokenize.h"

namespace graft::data {
namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

constexpr size_t kMaxCacheWords = 1 << 20;  // bounds memory on unbounded input streams

}  // namespace

BpeTokenizer::BpeTokenizer(std::vector<Merge> merges) : merges_(std::move(merges)) {
  bytes_.reserve(256 + merges_.size() + 1);
  for (int b = 0; b < 256; ++b) bytes_.emplace_back(1, static_cast<char>(b));
  rank_.reserve(merges_.size() * 2);
  for (size_t k = 0; k < merges_.size(); ++k) {
    bytes_.push_back(bytes_[merges_[k].first] + bytes_[merges_[k].second]);
    rank_.emplace(pair_key(merges_[k].first, merges_[k].second), static_cast<int32_t>(k));
  }
  bytes_.emplace_back();  // eot
}

BpeTokenizer::BpeTokenizer(const BpeTokenizer& o)
    : merges_(o.merges_), bytes_(o.bytes_), rank_(o.rank_) {}
BpeTokenizer::BpeTokenizer(BpeTokenizer&& o) noexcept
    : merges_(std::move(o.merges_)), bytes_(std::move(o.bytes_)), rank_(std::move(o.rank_)) {}
BpeTokenizer& BpeTokenizer::operator=(BpeTokenizer o) noexcept {
  merges_ = std::move(o.merges_);
  bytes_ = std::move(o.bytes_);
  rank_ = std::move(o.rank_);
  std::lock_guard<std::mutex> lock(cache_mu_);
  cache_.clear();
  return *this;
}

absl::StatusOr<BpeTokenizer> BpeTokenizer::from_merges(std::vector<Merge> merges) {
  for (size_t k = 0; k < merges.size(); ++k) {
    const int64_t limit = 256 + static_cast<int64_t>(k);  // ids defined before merge k
    const auto [a, b] = merges[k];
    if (a < 0 || b < 0 || a >= limit || b >= limit) {
      std::ostringstream m;
      m << "merge " << k << " (" << a << ", " << b << ") uses an id outside [0, " << limit << ")";
      return absl::InvalidArgumentError(m.str());
    }
  }
  if (merges.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max() - 257)) {
    return absl::InvalidArgumentError("too many merges");
  }
  BpeTokenizer t(std::move(merges));
  if (t.rank_.size() != t.merges_.size()) return absl::InvalidArgumentError("duplicate merge");
  return t;
}

const std::string& BpeTokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size())
    fail("token_bytes", "id ", id, " outside [0, ", vocab_size(), ")");
  return bytes_[id];
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(std::string(word));
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> sym(word.size());
  for (size_t i = 0; i < word.size(); ++i) sym[i] = static_cast<unsigned char>(word[i]);
  // Repeatedly merge every occurrence of the lowest-ranked adjacent pair: the same result as
  // replaying the merges in training order (a merge whose pair is absent changes nothing).
  while (sym.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max();
    for (size_t i = 0; i + 1 < sym.size(); ++i) {
      auto it = rank_.find(pair_key(sym[i], sym[i + 1]));
      if (it != rank_.end() && it->second < best) best = it->second;
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    const auto [a, b] = merges_[best];
    const int32_t id = 256 + best;
    size_t w = 0;
    for (size_t i = 0; i < sym.size(); ++i) {
      if (i + 1 < sym.size() && sym[i] == a && sym[i + 1] == b) {
        sym[w++] = id;
        ++i;
      } else {
        sym[w++] = sym[i];
      }
    }
    sym.resize(w);
  }
  out.insert(out.end(), sym.begin(), sym.end());
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cache_.size() >= kMaxCacheWords) cache_.clear();
  cache_.emplace(std::string(word), std::move(sym));
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  for (std::string_view w : pretokenize(text)) encode_word(w, out);
  return out;
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  const int32_t v = vocab_size();
  for (int32_t id : ids) {
    if (id < 0 || id >= v) fail("decode", "id ", id, " outside [0, ", v, ") of a bpe vocab");
    if (id == v - 1) {
      s += kEotText;
    } else {
      s += bytes_[id];
    }
  }
  return s;
}

absl::Status BpeTokenizer::save(const std::string& path) const {
  std::ostringstream out;
  out << "graft-bpe 1\nvocab_size " << vocab_size() << "\nmerges " << merges_.size() << "\n";
  for (const auto& [a, b] : merges_) out << a << ' ' << b << '\n';
  out << "end\n";
  return write_file_atomically(path, {out.str()});
}

absl::StatusOr<BpeTokenizer> parse_bpe(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  auto bad = [&](const std::string& why) {
    return absl::DataLossError(path + ":" + std::to_string(line_no) + ": " + why);
  };
  auto next = [&]() -> bool {
    if (!std::getline(in, line)) return false;
    ++line_no;
    return true;
  };
  // Parses "<key> <int>" exactly (no trailing garbage).
  auto keyed = [&](const std::string& key, int64_t& v) {
    std::istringstream ls(line);
    std::string k, rest;
    return static_cast<bool>(ls >> k >> v) && k == key && !(ls >> rest);
  };
  if (!next() || line != "graft-bpe 1") return bad("not a graft-bpe 1 file");
  int64_t vocab = 0, count = 0;
  if (!next() || !keyed("vocab_size", vocab)) return bad("expected 'vocab_size <n>'");
  if (!next() || !keyed("merges", count)) return bad("expected 'merges <n>'");
  if (count < 0 || count > (1 << 24) || vocab != 256 + count + 1) {
    return bad("vocab_size " + std::to_string(vocab) + " != 257 + merges " + std::to_string(count));
  }
  std::vector<BpeTokenizer::Merge> merges;
  merges.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    if (!next())
      return bad("truncated: " + std::to_string(k) + " of " + std::to_string(count) + " merges");
    std::istringstream ls(line);
    int64_t a = -1, b = -1;
    std::string rest;
    if (!(ls >> a >> b) || (ls >> rest)) return bad("bad merge line '" + line + "'");
    if (a < 0 || b < 0 || a >= 256 + k || b >= 256 + k) {
      return bad("merge (" + std::to_string(a) + ", " + std::to_string(b) +
                 ") uses an id not defined before it");
    }
    merges.emplace_back(static_cast<int32_t>(a), static_cast<int32_t>(b));
  }
  if (!next() || line != "end") return bad("truncated: missing 'end'");
  if (next()) return bad("trailing data after 'end'");
  auto t = BpeTokenizer::from_merges(std::move(merges));
  if (!t.ok()) return absl::DataLossError(path + ": " + std::string(t.status().message()));
  return t;
}

absl::StatusOr<BpeTokenizer> BpeTokenizer::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("tokenizer file not found: " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_bpe(ss.str(), path);
}

}  // namespace graft::data
