// Reading a file's bytes front to back in chunks, decompressed by its name: "*.gz" with zlib
// (gzip, also several members back to back), "*.zst" with libzstd (one or more frames), any
// other name as it is. Memory stays bounded by the chunk size whatever the file's size.
//
// Errors name the file: NotFound / PermissionDenied on open, DataLoss for corrupt data and for
// a compressed stream that ends early (a truncated download).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace graft::data {

class CompressedReader {
 public:
  static absl::StatusOr<std::unique_ptr<CompressedReader>> open(const std::string& path);
  virtual ~CompressedReader() = default;

  // Up to n decompressed bytes into buf; 0 only at the end of the data.
  virtual absl::StatusOr<size_t> read(char* buf, size_t n) = 0;

  const std::string& path() const { return path_; }
  int64_t file_bytes_read() const { return file_bytes_read_; }  // of the file on disk

 protected:
  explicit CompressedReader(std::string path) : path_(std::move(path)) {}
  std::string path_;
  int64_t file_bytes_read_ = 0;
};

}  // namespace graft::data
