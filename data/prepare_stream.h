// prepare's tokenizing pass: documents from a DocumentSource, one at a time, each encoded and
// followed by eot in the train or the validation token file (by is_val_doc, data/prepare.h),
// both written as streams (TokenFileWriter). Memory holds one document and its tokens, never
// the corpus or the token files.
//
// The split is split_docs' (data/prepare.h), tiny corpora included: with val_fraction > 0 and
// at least two documents, an empty side gets the document nearest the threshold from the other
// (its tokens are cut out of that file at the end).
//
// The unigram baseline (data/baseline.h) comes from token counts kept on the way.
//
// With a progress stream, a line every progress_seconds and one at the end, e.g.
//   prepare: 1200000 docs, 3.5 GB of text, 1.2 GB of 4.1 GB input (29%), 38.5 MB/s, ETA 75 s
// (input: the files as stored, compressed or not; the rate and ETA are of input bytes).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "data/document_source.h"
#include "data/tokenizer.h"

namespace graft::data {

struct SplitCounts {
  int64_t train_docs = 0, val_docs = 0;
  int64_t train_bytes = 0, val_bytes = 0;  // of the documents' text
  int64_t train_tokens = 0, val_tokens = 0;
  double unigram_nats = 0;  // NaN without validation tokens
};

struct ProgressOptions {
  std::ostream* out = nullptr;  // no lines when null
  double seconds = 10;          // between lines
};

absl::StatusOr<SplitCounts> encode_split(DocumentSource& docs, const Tokenizer& tokenizer,
                                         double val_fraction, int64_t seed,
                                         const std::string& train_path, const std::string& val_path,
                                         const ProgressOptions& progress = {});

}  // namespace graft::data
