#include "data/hf_tokenizer.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "data/atomic_file.h"

namespace graft::data {
namespace {

constexpr char kSavedMagic[] = "graft-hf 1";

// The ByteLevel decoder's bytes for one token: its byte-level characters' bytes, or, if one of
// its characters is not byte-level, the token's own UTF-8.
std::string decoded_bytes(const std::string& token) {
  std::string out;
  if (!byte_level_to_bytes(token, out)) out = token;
  return out;
}

// tokenizers' AddedVocabulary::add_tokens, given all added tokens at once on load: an added
// token takes the id its content already has (an earlier added token, or the model's
// vocabulary), else the next id from the model's vocabulary size on. Empty contents and exact
// repeats are skipped; a content seen again with other flags replaces the earlier token.
std::map<int32_t, HfAddedToken> assign_added_ids(const std::vector<HfAddedToken>& tokens,
                                                 const HfBpeModel& model,
                                                 std::unordered_map<std::string, int32_t>& ids,
                                                 std::vector<std::string>& special) {
  std::map<int32_t, HfAddedToken> by_id;
  int64_t next_id = model.entries();
  auto same = [](const HfAddedToken& a, const HfAddedToken& b) {
    return a.content == b.content && a.special == b.special && a.single_word == b.single_word &&
           a.lstrip == b.lstrip && a.rstrip == b.rstrip && a.normalized == b.normalized;
  };
  for (HfAddedToken t : tokens) {
    if (t.content.empty()) continue;
    if (auto it = ids.find(t.content); it != ids.end()) {
      auto old = by_id.find(it->second);
      if (old != by_id.end() && same(old->second, t)) continue;
    }
    int32_t id;
    if (auto it = ids.find(t.content); it != ids.end()) {
      id = it->second;
    } else if (int32_t m = model.token_to_id(t.content); m >= 0) {
      id = m;
    } else {
      id = static_cast<int32_t>(next_id++);
    }
    ids[t.content] = id;
    if (t.special && std::find(special.begin(), special.end(), t.content) == special.end()) {
      special.push_back(t.content);
    }
    t.id = id;
    by_id[id] = std::move(t);
  }
  return by_id;
}

absl::StatusOr<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("tokenizer file not found: " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError("read failed: " + path);
  return ss.str();
}

}  // namespace

HfTokenizer::HfTokenizer(HfTokenizerSpec spec, HfBpeModel model, std::string json_text)
    : pre_tokenizer_(std::move(spec.pre_tokenizer)),
      model_(std::move(model)),
      json_text_(std::move(json_text)) {
  std::vector<std::string> special;
  const auto added = assign_added_ids(spec.added_tokens, model_, added_ids_, special);
  std::vector<HfAddedToken> raw, normalized;
  int64_t max_id = -1;
  for (const auto& [token, id] : model_.vocab()) max_id = std::max<int64_t>(max_id, id);
  for (const auto& [id, t] : added) {
    max_id = std::max<int64_t>(max_id, id);
    HfAddedToken m = t;
    // Matching skips a special token by its content (tokenizers' special_tokens_set).
    m.special = std::find(special.begin(), special.end(), t.content) != special.end();
    (t.normalized ? normalized : raw).push_back(std::move(m));
  }
  raw_matcher_ = AddedTokenMatcher(std::move(raw));
  normalized_matcher_ = AddedTokenMatcher(std::move(normalized));
  vocab_size_ = static_cast<int32_t>(max_id + 1);
  // decode names an added token by its content first, then the model's string.
  std::vector<std::pair<int32_t, std::string>> by_id;
  by_id.reserve(model_.vocab().size() + added.size());
  for (const auto& [id, t] : added) by_id.emplace_back(id, decoded_bytes(t.content));
  for (const auto& [token, id] : model_.vocab()) {
    if (added.count(id) == 0) by_id.emplace_back(id, decoded_bytes(token));
  }
  std::sort(by_id.begin(), by_id.end());  // several strings of one id: the smallest, fixed
  decode_offsets_.assign(static_cast<size_t>(vocab_size_) + 1, 0);
  size_t k = 0;
  for (int32_t id = 0; id < vocab_size_; ++id) {
    if (k < by_id.size() && by_id[k].first == id) decode_bytes_ += by_id[k].second;
    while (k < by_id.size() && by_id[k].first == id) ++k;
    decode_offsets_[id + 1] = decode_bytes_.size();
  }
}

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::from_json(std::string json_text,
                                                                    const std::string& where,
                                                                    const std::string& eot) {
  auto spec = parse_hf_tokenizer_json(json_text, where);
  if (!spec.ok()) return spec.status();
  auto model = HfBpeModel::create(spec->vocab, spec->merges, spec->ignore_merges);
  if (!model.ok()) {
    return absl::InvalidArgumentError(where + ": " + std::string(model.status().message()));
  }
  std::unique_ptr<HfTokenizer> t(
      new HfTokenizer(*std::move(spec), *std::move(model), std::move(json_text)));
  if (!eot.empty()) {
    t->eot_id_ = t->token_to_id(eot);
    if (t->eot_id_ < 0) {
      return absl::InvalidArgumentError(where + ": the end-of-text token " +
                                        nlohmann::json(eot).dump() + " is not in the tokenizer");
    }
    t->eot_token_ = eot;
    return t;
  }
  std::string tried;
  for (const char* name : kHfEotNames) {
    if (int32_t id = t->token_to_id(name); id >= 0) {
      t->eot_id_ = id;
      t->eot_token_ = name;
      return t;
    }
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  return absl::InvalidArgumentError(where + ": no end-of-text token: none of " + tried +
                                    " is in the tokenizer; name one (training.tokenizer_eot)");
}

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::load_json(const std::string& path,
                                                                    const std::string& eot) {
  auto text = read_whole(path);
  if (!text.ok()) return text.status();
  return from_json(*std::move(text), path, eot);
}

int32_t HfTokenizer::token_to_id(const std::string& token) const {
  auto it = added_ids_.find(token);
  return it != added_ids_.end() ? it->second : model_.token_to_id(token);
}

void HfTokenizer::encode_plain(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<std::string_view> pieces{text}, next;
  std::deque<std::string> prefixed;  // pieces that ByteLevel's add_prefix_space lengthened
  for (const HfPreTokenizerStep& step : pre_tokenizer_) {
    next.clear();
    for (std::string_view p : pieces) {
      if (step.kind == HfPreTokenizerStep::kSplit) {
        split_with_pattern(p, step.pattern, next);
        continue;
      }
      if (step.add_prefix_space && p.front() != ' ') {
        prefixed.push_back(" " + std::string(p));
        p = prefixed.back();
      }
      if (step.use_regex) {
        split_with_pattern(p, SplitPattern::kGpt2, next);
      } else {
        next.push_back(p);
      }
    }
    pieces.swap(next);
  }
  for (std::string_view p : pieces) model_.encode_piece(p, out);
}

void HfTokenizer::encode_into(std::string_view text, bool parse_special,
                              std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::vector<TextPiece> outer, inner;
  raw_matcher_.split(text, !parse_special, outer);
  for (const TextPiece& p : outer) {
    if (p.id >= 0) {
      out.push_back(p.id);
      continue;
    }
    inner.clear();
    normalized_matcher_.split(p.text, !parse_special, inner);
    for (const TextPiece& q : inner) {
      if (q.id >= 0) {
        out.push_back(q.id);
      } else {
        encode_plain(q.text, out);
      }
    }
  }
}

std::vector<int32_t> HfTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  encode_into(text, /*parse_special=*/false, out);
  return out;
}

std::vector<int32_t> HfTokenizer::encode_special(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  encode_into(text, /*parse_special=*/true, out);
  return out;
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size_) {
      fail("decode", "id ", id, " outside [0, ", vocab_size_, ") of an hf vocab");
    }
    s.append(decode_bytes_, decode_offsets_[id], decode_offsets_[id + 1] - decode_offsets_[id]);
  }
  return s;
}

absl::Status HfTokenizer::save(const std::string& path) const {
  const std::string header = std::string(kSavedMagic) + "\neot " +
                             nlohmann::json(eot_token_).dump() + "\njson " +
                             std::to_string(json_text_.size()) + "\n";
  return write_file_atomically(path, {header, json_text_, "\nend\n"});
}

absl::StatusOr<std::unique_ptr<HfTokenizer>> parse_hf_saved(std::string text,
                                                            const std::string& path) {
  auto bad = [&](const std::string& why) {
    return absl::DataLossError(path + ": " + why + " (a graft-hf tokenizer file)");
  };
  std::istringstream in(text);
  std::string magic, eot_line, size_line;
  if (!std::getline(in, magic) || magic != kSavedMagic) return bad("bad first line");
  if (!std::getline(in, eot_line) || eot_line.rfind("eot ", 0) != 0) {
    return bad("line 2: expected 'eot \"<token>\"'");
  }
  const nlohmann::json eot = nlohmann::json::parse(eot_line.substr(4), nullptr, false);
  if (!eot.is_string() || eot.get<std::string>().empty()) return bad("line 2: bad eot token");
  if (!std::getline(in, size_line) || size_line.rfind("json ", 0) != 0) {
    return bad("line 3: expected 'json <bytes>'");
  }
  size_t size = 0;
  try {
    size_t used = 0;
    size = std::stoul(size_line.substr(5), &used);
    if (used != size_line.size() - 5) return bad("line 3: bad byte count");
  } catch (const std::exception&) {
    return bad("line 3: bad byte count");
  }
  const size_t start = magic.size() + eot_line.size() + size_line.size() + 3;
  if (text.size() < start + size || text.compare(start + size, std::string::npos, "\nend\n") != 0) {
    return bad("truncated or trailing data after the tokenizer.json text");
  }
  auto t = HfTokenizer::from_json(text.substr(start, size), path, eot.get<std::string>());
  if (!t.ok()) return absl::DataLossError(std::string(t.status().message()));
  return t;
}

}  // namespace graft::data
