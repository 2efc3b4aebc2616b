// Documents handed to prepare one at a time, so that a dataset larger than memory can be
// tokenized in a stream (data/prepare_stream.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/jsonl.h"

namespace graft::data {

class DocumentSource {
 public:
  virtual ~DocumentSource() = default;
  // The next document into doc; false after the last one.
  virtual absl::StatusOr<bool> next(std::string& doc) = 0;
  // Progress through the input in bytes (of the files for a file source); total < 0: unknown.
  virtual int64_t bytes_done() const = 0;
  virtual int64_t bytes_total() const = 0;
};

// Documents already in memory (a data/corpus.h Corpus).
class VectorDocuments final : public DocumentSource {
 public:
  explicit VectorDocuments(const std::vector<std::string>& docs) : docs_(docs) {
    for (const auto& d : docs) total_ += static_cast<int64_t>(d.size());
  }
  absl::StatusOr<bool> next(std::string& doc) override {
    if (i_ == docs_.size()) return false;
    doc = docs_[i_++];
    done_ += static_cast<int64_t>(doc.size());
    return true;
  }
  int64_t bytes_done() const override { return done_; }
  int64_t bytes_total() const override { return total_; }

 private:
  const std::vector<std::string>& docs_;
  size_t i_ = 0;
  int64_t done_ = 0, total_ = 0;
};

// The documents of JSON Lines files, read in a stream.
class JsonlSource final : public DocumentSource {
 public:
  explicit JsonlSource(JsonlDocuments docs) : docs_(std::move(docs)) {}
  absl::StatusOr<bool> next(std::string& doc) override { return docs_.next(doc); }
  int64_t bytes_done() const override { return docs_.file_bytes_read(); }
  int64_t bytes_total() const override { return docs_.file_bytes_total(); }

 private:
  JsonlDocuments docs_;
};

}  // namespace graft::data
