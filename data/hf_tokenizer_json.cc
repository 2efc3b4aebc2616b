#include "data/hf_tokenizer_json.h"

#include <nlohmann/json.hpp>

namespace graft::data {
namespace {

using json = nlohmann::json;

// Errors name the file and the JSON path of the offending value.
class Reader {
 public:
  explicit Reader(const std::string& where) : where_(where) {}

  absl::Status error(const std::string& path, const std::string& why) const {
    return absl::InvalidArgumentError(where_ + ": " + path + ": " + why);
  }
  absl::Status unsupported(const std::string& path, const std::string& what) const {
    return error(path, what + " is not supported (graft reads byte-level BPE tokenizers only)");
  }

  // A member that may be absent; absent and null both give null.
  static const json& member(const json& object, const char* key) {
    static const json null_value;
    auto it = object.find(key);
    return it == object.end() ? null_value : *it;
  }

  absl::StatusOr<bool> boolean(const json& object, const char* key, const std::string& path,
                               bool fallback) const {
    const json& v = member(object, key);
    if (v.is_null()) return fallback;
    if (!v.is_boolean()) return error(path + "." + key, "expected true or false");
    return v.get<bool>();
  }

  absl::StatusOr<std::string> type_of(const json& object, const std::string& path) const {
    if (!object.is_object()) return error(path, "expected an object");
    const json& t = member(object, "type");
    if (!t.is_string()) return error(path + ".type", "expected a string");
    return t.get<std::string>();
  }

 private:
  std::string where_;
};

absl::Status read_model(const Reader& r, const json& model, HfTokenizerSpec& spec) {
  auto type = r.type_of(model, "model");
  if (!type.ok()) return type.status();
  if (*type != "BPE") return r.unsupported("model.type", "model type '" + *type + "'");
  const json& dropout = Reader::member(model, "dropout");
  if (!dropout.is_null() && !(dropout.is_number() && dropout.get<double>() == 0.0)) {
    return r.unsupported("model.dropout", "BPE dropout " + dropout.dump());
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json& v = Reader::member(model, key);
    if (!v.is_null() && v != "") {
      return r.unsupported(std::string("model.") + key, std::string(key) + " " + v.dump());
    }
  }
  auto ignore = r.boolean(model, "ignore_merges", "model", false);
  if (!ignore.ok()) return ignore.status();
  spec.ignore_merges = *ignore;

  const json& vocab = Reader::member(model, "vocab");
  if (!vocab.is_object()) return r.error("model.vocab", "expected an object of token -> id");
  spec.vocab.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const json& id = it.value();
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxHfIds) {
      return r.error("model.vocab[" + json(it.key()).dump() + "]",
                     "expected an id in [0, 2^24), got " + id.dump());
    }
    spec.vocab.emplace_back(it.key(), static_cast<int32_t>(id.get<int64_t>()));
  }

  const json& merges = Reader::member(model, "merges");
  if (!merges.is_array()) return r.error("model.merges", "expected an array");
  spec.merges.reserve(merges.size());
  size_t rank = 0;
  for (const json& m : merges) {
    const std::string path = "model.merges[" + std::to_string(rank) + "]";
    if (m.is_string()) {  // the older "a b" form (tokenizers skips "#version" lines)
      const std::string s = m.get<std::string>();
      if (s.rfind("#version", 0) == 0) continue;
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        return r.error(path, "expected 'a b' with exactly one space, got " + m.dump());
      }
      spec.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      spec.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return r.error(path, "expected \"a b\" or [\"a\", \"b\"], got " + m.dump());
    }
    ++rank;
  }
  return absl::OkStatus();
}

absl::Status read_pre_tokenizer_step(const Reader& r, const json& step, const std::string& path,
                                     HfTokenizerSpec& spec) {
  auto type = r.type_of(step, path);
  if (!type.ok()) return type.status();
  HfPreTokenizerStep s;
  if (*type == "ByteLevel") {
    s.kind = HfPreTokenizerStep::kByteLevel;
    const json& prefix = Reader::member(step, "add_prefix_space");  // required, as in tokenizers
    if (!prefix.is_boolean()) return r.error(path + ".add_prefix_space", "expected true or false");
    auto regex = r.boolean(step, "use_regex", path, true);  // tokenizers' default
    if (!regex.ok()) return regex.status();
    s.add_prefix_space = prefix.get<bool>();
    s.use_regex = *regex;
  } else if (*type == "Split") {
    s.kind = HfPreTokenizerStep::kSplit;
    const json& pattern = Reader::member(step, "pattern");
    const json& regex = pattern.is_object() ? Reader::member(pattern, "Regex") : pattern;
    if (!regex.is_string()) {
      return r.unsupported(path + ".pattern",
                           "Split pattern " + pattern.dump() + " (only a Regex pattern is)");
    }
    auto known = split_pattern_for(regex.get<std::string>());
    if (!known) {
      return r.unsupported(path + ".pattern.Regex",
                           "Split regex " + regex.dump() +
                               " (graft implements GPT-2's and Llama 3's patterns exactly)");
    }
    s.pattern = *known;
    const json& behavior = Reader::member(step, "behavior");
    if (behavior != "Isolated") {
      return r.unsupported(path + ".behavior", "Split behavior " + behavior.dump());
    }
    auto invert = r.boolean(step, "invert", path, false);
    if (!invert.ok()) return invert.status();
    if (*invert) return r.unsupported(path + ".invert", "Split with invert true");
  } else {
    return r.unsupported(path + ".type", "pre-tokenizer '" + *type + "'");
  }
  if (!spec.pre_tokenizer.empty() &&
      spec.pre_tokenizer.back().kind == HfPreTokenizerStep::kByteLevel) {
    return r.unsupported(path, "a pre-tokenizer after ByteLevel");
  }
  spec.pre_tokenizer.push_back(s);
  return absl::OkStatus();
}

absl::Status read_pre_tokenizer(const Reader& r, const json& pre, HfTokenizerSpec& spec) {
  if (pre.is_null()) return r.unsupported("pre_tokenizer", "a null pre_tokenizer");
  auto type = r.type_of(pre, "pre_tokenizer");
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    const json& steps = Reader::member(pre, "pretokenizers");
    if (!steps.is_array()) return r.error("pre_tokenizer.pretokenizers", "expected an array");
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::string path = "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]";
      if (auto s = read_pre_tokenizer_step(r, steps[i], path, spec); !s.ok()) return s;
    }
  } else if (auto s = read_pre_tokenizer_step(r, pre, "pre_tokenizer", spec); !s.ok()) {
    return s;
  }
  if (spec.pre_tokenizer.empty() ||
      spec.pre_tokenizer.back().kind != HfPreTokenizerStep::kByteLevel) {
    return r.unsupported("pre_tokenizer", "a pre_tokenizer that does not end with ByteLevel");
  }
  return absl::OkStatus();
}

absl::Status read_added_tokens(const Reader& r, const json& added, HfTokenizerSpec& spec) {
  if (added.is_null()) return absl::OkStatus();
  if (!added.is_array()) return r.error("added_tokens", "expected an array");
  if (added.size() >= kMaxHfIds) return r.error("added_tokens", "more than 2^24 tokens");
  for (size_t i = 0; i < added.size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const json& a = added[i];
    if (!a.is_object()) return r.error(path, "expected an object");
    const json& content = Reader::member(a, "content");
    if (!content.is_string()) return r.error(path + ".content", "expected a string");
    HfAddedToken t;
    t.content = content.get<std::string>();
    bool* flags[] = {&t.special, &t.single_word, &t.lstrip, &t.rstrip, &t.normalized};
    const char* keys[] = {"special", "single_word", "lstrip", "rstrip", "normalized"};
    for (int k = 0; k < 5; ++k) {
      auto v = r.boolean(a, keys[k], path, *flags[k]);
      if (!v.ok()) return v.status();
      *flags[k] = *v;
    }
    spec.added_tokens.push_back(std::move(t));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HfTokenizerSpec> parse_hf_tokenizer_json(std::string_view json_text,
                                                        const std::string& where) {
  const Reader r(where);
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(where + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) return r.error("(top level)", "expected a tokenizer.json object");
  const json& version = Reader::member(root, "version");
  if (!version.is_null() && version != "1.0") {
    return r.unsupported("version", "tokenizer.json version " + version.dump());
  }
  if (!Reader::member(root, "truncation").is_null()) {
    return r.unsupported("truncation", "truncation (graft encodes whole documents)");
  }
  const json& normalizer = Reader::member(root, "normalizer");
  if (!normalizer.is_null()) {
    const json& t = Reader::member(normalizer, "type");
    return r.unsupported("normalizer",
                         "normalizer " + (t.is_string() ? t.dump() : normalizer.dump()));
  }
  const json& model = Reader::member(root, "model");
  if (model.is_null()) return r.error("model", "missing");
  HfTokenizerSpec spec;
  if (auto s = read_model(r, model, spec); !s.ok()) return s;
  if (auto s = read_pre_tokenizer(r, Reader::member(root, "pre_tokenizer"), spec); !s.ok()) {
    return s;
  }
  const json& decoder = Reader::member(root, "decoder");
  if (decoder.is_null()) return r.unsupported("decoder", "a null decoder (ByteLevel is needed)");
  auto decoder_type = r.type_of(decoder, "decoder");
  if (!decoder_type.ok()) return decoder_type.status();
  if (*decoder_type != "ByteLevel") {
    return r.unsupported("decoder.type", "decoder '" + *decoder_type + "'");
  }
  if (auto s = read_added_tokens(r, Reader::member(root, "added_tokens"), spec); !s.ok()) {
    return s;
  }
  return spec;
}

}  // namespace graft::data
