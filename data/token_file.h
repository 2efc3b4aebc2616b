// Token files: a 32-byte header then raw little-endian token ids.
//
//   offset 0  char[8]  "GRAFTTOK"
//          8  u32      version (1)
//         12  u32      element width in bytes: 2 when vocab_size <= 65535, else 4
//         16  u64      token count
//         24  u32      vocab_size (every id is < vocab_size)
//         28  u32      reserved (0)
//         32  tokens
//
// TokenFile memory-maps a file read-only (RAII: unmapped on destruction) and is safe to read
// from many threads; share it through the shared_ptr that open() returns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graft::data {

inline constexpr char kTokenMagic[8] = {'G', 'R', 'A', 'F', 'T', 'T', 'O', 'K'};
inline constexpr uint32_t kTokenFileVersion = 1;
inline constexpr int64_t kTokenHeaderBytes = 32;

inline int token_width_for(int64_t vocab_size) { return vocab_size <= 65535 ? 2 : 4; }

// Writes atomically (data/atomic_file.h: no temporary is left on failure, and the status
// names the cause). InvalidArgument if an id is outside [0, vocab_size).
absl::Status write_token_file(const std::string& path, const std::vector<int32_t>& tokens,
                              int64_t vocab_size);

// Writes a token file of unknown length in a stream, with the guarantees of write_token_file:
// tokens go to the temporary temp_path_for(path) (a buffer of 1 MiB at a time), finish() writes
// the count into the header, fsyncs and renames; a writer destroyed unfinished, or any failure,
// removes the temporary. Errors name the file and the cause.
class TokenFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<TokenFileWriter>> create(const std::string& path,
                                                                 int64_t vocab_size);
  ~TokenFileWriter();
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  // InvalidArgument if an id is outside [0, vocab_size).
  absl::Status append(const std::vector<int32_t>& ids);
  // Removes tokens [start, start + n) (moving the tokens after them down) and returns them:
  // how prepare moves one document between the splits.
  absl::StatusOr<std::vector<int32_t>> cut(int64_t start, int64_t n);
  absl::Status finish();
  int64_t size() const { return count_; }

 private:
  TokenFileWriter() = default;
  absl::Status flush();
  absl::Status fail(absl::Status s);  // removes the temporary, returns s

  std::string path_, tmp_;
  int fd_ = -1;
  int width_ = 2;
  int64_t vocab_size_ = 0;
  int64_t count_ = 0;    // tokens, those in buffer_ included
  int64_t written_ = 0;  // tokens on disk
  std::string buffer_;
};

class TokenFile {
 public:
  // NotFound (missing), DataLoss (bad magic, truncated, ids >= vocab_size when verify_ids),
  // InvalidArgument (unknown version, width not 2/4 or too narrow for the vocab).
  static absl::StatusOr<std::shared_ptr<const TokenFile>> open(const std::string& path,
                                                               bool verify_ids = true);
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  int64_t size() const { return count_; }
  int width() const { return width_; }
  int64_t vocab_size() const { return vocab_size_; }
  const std::string& path() const { return path_; }
  int32_t at(int64_t i) const;  // unchecked: 0 <= i < size()
  // tokens [start, start + n) into out (checked: throws graft::Error "[TokenFile]" if outside).
  void read(int64_t start, int64_t n, int32_t* out) const;
  std::vector<int32_t> read_all() const;

 private:
  TokenFile() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const unsigned char* data_ = nullptr;
  int64_t count_ = 0;
  int width_ = 2;
  int64_t vocab_size_ = 0;
};

}  // namespace graft::data
