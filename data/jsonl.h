// JSON Lines datasets: files holding one JSON object per line whose string field "text" is a
// document (other fields are ignored). Names ending in .jsonl or .json, optionally followed by
// .gz or .zst (data/compressed_reader.h), are read as JSON Lines. Blank lines and documents
// whose text is "" are skipped. A dataset is one such file or a directory of them (searched
// recursively, read in sorted path order).
//
// JsonlDocuments streams the documents: memory holds one line at a time (a line may be at
// most kMaxJsonlLineBytes), never a whole file. Errors name the file and line: NotFound for a
// missing path, InvalidArgument for a malformed line, a line that is not an object with a
// string "text", an overlong line, or a directory without JSON Lines files (or with .txt files
// too), DataLoss for truncated or corrupt compressed data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/compressed_reader.h"

namespace graft::data {

inline constexpr size_t kMaxJsonlLineBytes = size_t{256} << 20;

bool is_jsonl_name(const std::string& path);

// The JSON Lines files of a dataset path, sorted; empty when the path is not a JSON Lines
// dataset (a text file, or a directory without JSON Lines files, which data/corpus.h reads).
// InvalidArgument for a directory that holds both JSON Lines and .txt files.
absl::StatusOr<std::vector<std::string>> find_jsonl_files(const std::string& path);

// A fingerprint of the files' paths, sizes and modification times: whether a dataset changed,
// without reading it.
absl::StatusOr<uint64_t> jsonl_fingerprint(const std::vector<std::string>& files);

class JsonlDocuments {
 public:
  // InvalidArgument for an empty list; file errors come from next().
  static absl::StatusOr<JsonlDocuments> open(std::vector<std::string> files);

  // The next document into doc; false after the last one.
  absl::StatusOr<bool> next(std::string& doc);

  int64_t file_bytes_total() const { return total_bytes_; }  // sizes on disk
  int64_t file_bytes_read() const;
  const std::string& current_file() const;

 private:
  JsonlDocuments() = default;
  // The next line of the open file into line_; false at its end.
  absl::StatusOr<bool> next_line();

  std::vector<std::string> files_;
  size_t file_index_ = 0;
  int64_t total_bytes_ = 0;
  int64_t done_bytes_ = 0;  // of the files already finished
  std::unique_ptr<CompressedReader> reader_;
  int64_t line_no_ = 0;
  std::string line_;
  std::vector<char> chunk_;
  size_t chunk_pos_ = 0, chunk_end_ = 0;
  bool file_done_ = false;
};

}  // namespace graft::data
