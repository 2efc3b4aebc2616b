// safetensors files: an 8-byte little-endian header size N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}}
// then the data buffer; offsets are relative to the buffer, tensors tile it exactly.
//
// The reader trusts nothing: every header is validated (sizes against the file size, JSON,
// dtypes, names, offsets against dtype * shape, overlaps and holes) and data is read with
// pread inside the bounds the header was checked against, so a hostile file gives an
// absl::Status, never a crash or a read outside the file. The parser uses only this file and
// the DType enum, so the fuzz target builds it alone (tools/fuzz_checkpoint.sh).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dtype/dtype.h"
#include "core/shape.h"

namespace graft::checkpoint {

// Largest header accepted (the Python package's limit is 100 MB as well).
inline constexpr uint64_t kMaxHeaderBytes = 100u << 20;

const char* safetensors_dtype_name(DType d);  // "F32", "BF16", "BOOL", ...
std::optional<DType> parse_safetensors_dtype(std::string_view name);
int64_t safetensors_dtype_size(DType d);

// A tensor name is usable as a key and never as a path: non-empty, at most 1024 bytes, no '/',
// no '\\', no "..", no control characters.
absl::Status validate_tensor_name(std::string_view name);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  uint64_t begin = 0;  // offsets into the data buffer
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // in offset order
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // file offset of the buffer (8 + N)
  const TensorInfo* find(std::string_view name) const;
};

// Reads N from the first 8 bytes and checks it against the file size.
absl::StatusOr<uint64_t> parse_header_size(const unsigned char first8[8], uint64_t file_size);
// Parses and validates the JSON header for a data buffer of `buffer_size` bytes.
absl::StatusOr<SafetensorsHeader> parse_header_json(std::string_view json, uint64_t buffer_size);
// Both steps over a whole file held in memory (the fuzz target).
absl::StatusOr<SafetensorsHeader> parse_safetensors_bytes(std::string_view file);

// A tensor to write: `data` holds numel(shape) * size(dtype) bytes, row-major.
struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  const void* data = nullptr;
};

// Writes a complete file (creating or truncating `path`); fsyncs it when `sync`.
absl::Status write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                               const std::map<std::string, std::string>& metadata = {},
                               bool sync = true);

// An open, validated file. Movable, not copyable; closes on destruction.
class SafetensorsReader {
 public:
  static absl::StatusOr<SafetensorsReader> open(const std::string& path);
  SafetensorsReader(SafetensorsReader&& o) noexcept;
  SafetensorsReader& operator=(SafetensorsReader&& o) noexcept;
  SafetensorsReader(const SafetensorsReader&) = delete;
  ~SafetensorsReader();

  const SafetensorsHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  // Copies the tensor's bytes (end - begin of them) into dst.
  absl::Status read(const TensorInfo& t, void* dst) const;

 private:
  SafetensorsReader() = default;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::string path_;
  SafetensorsHeader header_;
};

// pread of exactly n bytes at offset; short reads are retried, EOF is DataLoss.
absl::Status pread_exact(int fd, void* dst, uint64_t n, uint64_t offset, const std::string& path);

}  // namespace graft::checkpoint
