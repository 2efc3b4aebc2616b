#include "data/prepare.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "data/atomic_file.h"
#include "data/baseline.h"
#include "data/bpe.h"
#include "data/corpus.h"
#include "data/document_source.h"
#include "data/hf_tokenizer.h"
#include "data/jsonl.h"
#include "data/prepare_stream.h"
#include "data/rng.h"
#include "data/token_file.h"
#include "data/tokenizer.h"

namespace graft::data {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kMetaVersion = 1;
constexpr char kHfPrefix[] = "hf:";

bool is_hf(const std::string& tokenizer) { return tokenizer.rfind(kHfPrefix, 0) == 0; }

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

// hf: the tokenizer.json's content and the eot it resolved to are options too.
json options_json(const PrepareOptions& o, const HfTokenizer* hf) {
  json j = {{"input", o.input},
            {"tokenizer", o.tokenizer},
            {"vocab_size", o.tokenizer == "bpe" ? o.vocab_size
                           : hf                 ? hf->vocab_size()
                                                : 257},
            {"val_fraction", o.val_fraction},
            {"seed", o.seed},
            {"paragraphs", o.paragraphs}};
  if (hf != nullptr) {
    j["tokenizer_json_fingerprint"] = hex(fnv1a64(hf->json_text()));
    j["eot_token"] = hf->eot_token();
  }
  return j;
}

absl::Status check_options(const PrepareOptions& o) {
  if (o.out_dir.empty()) return absl::InvalidArgumentError("prepare: out_dir is empty");
  if (o.tokenizer != "bpe" && o.tokenizer != "byte" &&
      !(is_hf(o.tokenizer) && o.tokenizer.size() > 3)) {
    return absl::InvalidArgumentError(
        "prepare: tokenizer must be 'bpe', 'byte' or 'hf:<path to tokenizer.json>', got '" +
        o.tokenizer + "'");
  }
  if (o.tokenizer == "bpe" && (o.vocab_size < 257 || o.vocab_size > (1 << 24))) {
    return absl::InvalidArgumentError("prepare: vocab_size must be in [257, 2^24], got " +
                                      std::to_string(o.vocab_size));
  }
  if (!(o.val_fraction >= 0 && o.val_fraction < 1)) {
    return absl::InvalidArgumentError("prepare: val_fraction must be in [0, 1)");
  }
  return absl::OkStatus();
}

PrepareResult paths(const std::string& dir) {
  PrepareResult r;
  r.train_path = (fs::path(dir) / "train.tokens").string();
  r.val_path = (fs::path(dir) / "val.tokens").string();
  r.tokenizer_path = (fs::path(dir) / "tokenizer.txt").string();
  r.meta_path = (fs::path(dir) / "meta.json").string();
  return r;
}

void fill_from_meta(const json& m, PrepareResult& r) {
  r.source = m["corpus"]["source"].get<std::string>();
  r.train_docs = m["train"]["docs"].get<int64_t>();
  r.val_docs = m["val"]["docs"].get<int64_t>();
  r.train_bytes = m["train"]["bytes"].get<int64_t>();
  r.val_bytes = m["val"]["bytes"].get<int64_t>();
  r.train_tokens = m["train"]["tokens"].get<int64_t>();
  r.val_tokens = m["val"]["tokens"].get<int64_t>();
  r.vocab_size = m["vocab_size"].get<int32_t>();
  r.unigram_nats = m["unigram_nats_per_token"].is_number()
                       ? m["unigram_nats_per_token"].get<double>()
                       : std::numeric_limits<double>::quiet_NaN();
}

// True when meta.json matches the options and corpus and every file it names is intact.
bool outputs_match(const json& want_options, const std::string& want_fp, PrepareResult& r) {
  std::ifstream in(r.meta_path);
  if (!in) return false;
  json m = json::parse(in, nullptr, /*allow_exceptions=*/false);
  try {
    if (m.is_discarded() || m.value("format_version", 0) != kMetaVersion ||
        m["options"] != want_options || m["corpus"]["fingerprint"] != want_fp) {
      return false;
    }
    fill_from_meta(m, r);
  } catch (const json::exception&) {
    return false;
  }
  auto train = TokenFile::open(r.train_path, /*verify_ids=*/false);
  auto val = TokenFile::open(r.val_path, /*verify_ids=*/false);
  auto tok = load_tokenizer(r.tokenizer_path);
  return train.ok() && val.ok() && tok.ok() && (*train)->size() == r.train_tokens &&
         (*val)->size() == r.val_tokens && (*tok)->vocab_size() == r.vocab_size &&
         (*train)->vocab_size() == r.vocab_size;
}

}  // namespace

double doc_unit(const std::string& doc, int64_t seed) {
  const uint64_t h = mix64(fnv1a64(doc) ^ mix64(static_cast<uint64_t>(seed)));
  return static_cast<double>(h >> 11) * 0x1.0p-53;  // uniform in [0, 1)
}

bool is_val_doc(const std::string& doc, double val_fraction, int64_t seed) {
  return doc_unit(doc, seed) < val_fraction;
}

Split split_docs(const std::vector<std::string>& docs, double val_fraction, int64_t seed) {
  Split s;
  for (const auto& d : docs) (is_val_doc(d, val_fraction, seed) ? s.val : s.train).push_back(d);
  // Tiny corpora: move the document nearest the threshold so neither side is empty.
  auto nearest = [&](std::vector<std::string>& from, bool want_low) {
    size_t best = 0;
    for (size_t i = 1; i < from.size(); ++i) {
      const double u = doc_unit(from[i], seed), b = doc_unit(from[best], seed);
      if (want_low ? u < b : u > b) best = i;
    }
    return best;
  };
  if (val_fraction > 0 && docs.size() >= 2) {
    if (s.val.empty()) {
      const size_t i = nearest(s.train, true);
      s.val.push_back(s.train[i]);
      s.train.erase(s.train.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (s.train.empty()) {
      const size_t i = nearest(s.val, false);
      s.train.push_back(s.val[i]);
      s.val.erase(s.val.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return s;
}

absl::StatusOr<PrepareResult> prepare(const PrepareOptions& o) {
  if (auto s = check_options(o); !s.ok()) return s;
  // The input: JSON Lines files (streamed) or a text corpus (in memory).
  std::vector<std::string> jsonl_files;
  if (o.input != "default" && !o.input.empty()) {
    auto files = find_jsonl_files(o.input);
    if (!files.ok()) return files.status();
    jsonl_files = *std::move(files);
  }
  std::optional<Corpus> corpus;
  std::string source, fp;
  if (!jsonl_files.empty()) {
    if (o.tokenizer == "bpe") {
      return absl::InvalidArgumentError(
          "prepare: the bpe tokenizer is trained on the whole corpus in memory; for the JSON "
          "Lines dataset " +
          o.input + " use 'byte' or 'hf:<tokenizer.json>'");
    }
    auto f = jsonl_fingerprint(jsonl_files);
    if (!f.ok()) return f.status();
    source = o.input;
    fp = "files:" + hex(*f);
  } else {
    auto c = load_corpus(o.input, o.paragraphs);
    if (!c.ok()) return c.status();
    corpus = *std::move(c);
    source = corpus->source;
    fp = hex(corpus->fingerprint());
  }
  std::unique_ptr<Tokenizer> tok;
  const HfTokenizer* hf = nullptr;
  if (is_hf(o.tokenizer)) {
    auto t = HfTokenizer::load_json(o.tokenizer.substr(3), o.eot_token);
    if (!t.ok()) return t.status();
    hf = t->get();
    tok = *std::move(t);
  }
  const json want_options = options_json(o, hf);
  PrepareResult r = paths(o.out_dir);
  if (!o.force && outputs_match(want_options, fp, r)) {
    r.reused = true;
    return r;
  }
  r = paths(o.out_dir);
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return absl::PermissionDeniedError("cannot create " + o.out_dir + ": " + ec.message());
  fs::remove(r.meta_path, ec);  // a half-rebuilt directory must never look complete

  if (o.tokenizer == "bpe") {
    const auto t0 = std::chrono::steady_clock::now();
    const Split split = split_docs(corpus->docs, o.val_fraction, o.seed);
    tok = std::make_unique<BpeTokenizer>(BpeTokenizer::train(split.train, o.vocab_size));
    r.tokenizer_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else if (o.tokenizer == "byte") {
    tok = std::make_unique<ByteTokenizer>();
  }
  // Each file is written atomically: a failure (a full disk) leaves no temporary behind and
  // names the cause; meta.json, removed above, is only written once the rest is in place.
  if (auto s = tok->save(r.tokenizer_path); !s.ok()) return s;
  std::unique_ptr<DocumentSource> docs;
  if (corpus) {
    docs = std::make_unique<VectorDocuments>(corpus->docs);
  } else {
    auto d = JsonlDocuments::open(jsonl_files);
    if (!d.ok()) return d.status();
    docs = std::make_unique<JsonlSource>(*std::move(d));
  }
  auto counts = encode_split(*docs, *tok, o.val_fraction, o.seed, r.train_path, r.val_path,
                             {o.progress, o.progress_seconds});
  if (!counts.ok()) return counts.status();
  r.source = source;
  r.train_docs = counts->train_docs;
  r.val_docs = counts->val_docs;
  r.train_bytes = counts->train_bytes;
  r.val_bytes = counts->val_bytes;
  r.train_tokens = counts->train_tokens;
  r.val_tokens = counts->val_tokens;
  r.vocab_size = tok->vocab_size();
  r.unigram_nats = counts->unigram_nats;

  auto split_json = [](int64_t docs, int64_t bytes, int64_t tokens) {
    return json{{"docs", docs},
                {"bytes", bytes},
                {"tokens", tokens},
                {"bytes_per_token", tokens > 0 ? static_cast<double>(bytes) / tokens : 0.0}};
  };
  json meta = {
      {"format_version", kMetaVersion},
      {"options", want_options},
      {"corpus",
       {{"source", r.source},
        {"format", corpus ? "text" : "jsonl"},
        {"fingerprint", fp},
        {"docs", r.train_docs + r.val_docs},
        {"bytes", r.train_bytes + r.val_bytes}}},
      {"train", split_json(r.train_docs, r.train_bytes, r.train_tokens)},
      {"val", split_json(r.val_docs, r.val_bytes, r.val_tokens)},
      {"vocab_size", r.vocab_size},
      {"eot_id", tok->eot_id()},
      {"token_width", token_width_for(r.vocab_size)},
      {"tokenizer",
       {{"kind", tok->kind()}, {"file", "tokenizer.txt"}, {"train_seconds", r.tokenizer_seconds}}},
      {"files", {{"train", "train.tokens"}, {"val", "val.tokens"}}},
      {"unigram_nats_per_token", std::isnan(r.unigram_nats) ? json(nullptr) : json(r.unigram_nats)},
  };
  if (auto s = write_file_atomically(r.meta_path, {meta.dump(2), "\n"}); !s.ok()) return s;
  return r;
}

}  // namespace graft::data
