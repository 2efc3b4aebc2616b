// prepare: corpus -> tokenizer + train/val token files + meta.json in out_dir.
//
//   out_dir/train.tokens, out_dir/val.tokens   (data/token_file.h)
//   out_dir/tokenizer.txt                      (load_tokenizer reads it)
//   out_dir/meta.json                          options, corpus, doc/byte/token counts, vocab,
//                                              unigram baseline (nats/token on val)
//
// Inputs: the default corpus or a text file / directory of .txt files (data/corpus.h, read
// into memory), or a JSON Lines file / directory of them (data/jsonl.h: plain, .gz or .zst),
// read in a stream with bounded memory. Tokenizers: "byte", "bpe" (trained on the train
// documents, so text inputs only) or "hf:<tokenizer.json>" (data/hf_tokenizer.h).
//
// Documents go to validation by a seeded hash of their content (identical documents land in
// the same split), so the split does not depend on document order or platform. Each
// document's tokens (special tokens in the text encoded as text) are followed by eot, in one
// streaming pass (data/prepare_stream.h). If meta.json exists and matches the options and the
// corpus (a content fingerprint for text; the files' paths, sizes and modification times for
// JSON Lines; the tokenizer.json's content for hf), and the files it names open with the
// recorded counts, nothing is rebuilt: a training program can call prepare() on every start
// and pay only for reading a text corpus (a JSON Lines dataset is not read at all).
//
// Files are written to per-process temporaries and renamed; meta.json is written last, so an
// interrupted run is redone next time, and processes (e.g. ranks of one job) that prepare the
// same directory at once each write identical files and the last rename wins.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graft::data {

struct PrepareOptions {
  std::string input = "default";  // "default" (fortunes), a text or JSON Lines file, or a dir
  std::string out_dir;
  std::string tokenizer = "bpe";  // "bpe", "byte" or "hf:<path to tokenizer.json>"
  int32_t vocab_size = 4096;      // bpe only (bytes + merges + eot)
  std::string eot_token;          // hf only: the end-of-text token; "" = found by name
  double val_fraction = 0.05;     // in [0, 1)
  int64_t seed = 0;
  bool paragraphs = true;            // text inputs: documents are paragraphs, else whole files
  bool force = false;                // rebuild even if the outputs match
  std::ostream* progress = nullptr;  // progress lines of the tokenizing pass; null = none
  double progress_seconds = 10;      // between them
};

struct PrepareResult {
  bool reused = false;  // outputs were already there and matched
  std::string train_path, val_path, tokenizer_path, meta_path;
  std::string source;
  int64_t train_docs = 0, val_docs = 0;
  int64_t train_bytes = 0, val_bytes = 0;
  int64_t train_tokens = 0, val_tokens = 0;
  int32_t vocab_size = 0;
  double unigram_nats = 0;       // NaN when there is no validation set
  double tokenizer_seconds = 0;  // training time (0 for byte, or when reused)
};

// Is this document in the validation split? (exposed for tests)
bool is_val_doc(const std::string& doc, double val_fraction, int64_t seed);
// The document's position in [0, 1) that is_val_doc compares with val_fraction.
double doc_unit(const std::string& doc, int64_t seed);

struct Split {
  std::vector<std::string> train, val;
};
// Hash split; with val_fraction > 0 and >= 2 docs both sides get at least one document.
Split split_docs(const std::vector<std::string>& docs, double val_fraction, int64_t seed);

absl::StatusOr<PrepareResult> prepare(const PrepareOptions& options);

}  // namespace graft::data
