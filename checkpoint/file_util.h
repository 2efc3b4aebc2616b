// Small POSIX helpers for the commit protocol: every failure is an absl::Status naming the
// path and errno's text.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace graft::checkpoint {

absl::Status errno_status(const char* what, const std::string& path);  // uses errno
absl::Status write_all(int fd, const void* data, size_t n, const std::string& path);
// Creates or truncates `path` with `text`, fsyncs the file when `sync`.
absl::Status write_file(const std::string& path, const std::string& text, bool sync);
// Reads a whole file, refusing ones larger than max_bytes.
absl::Status read_file(const std::string& path, std::string& out, size_t max_bytes);
// fsyncs a directory so that entries created or renamed in it are durable.
absl::Status fsync_dir(const std::string& path);

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser();
  absl::Status close();  // reports close errors (a failed write-back shows up here)

 private:
  int fd_;
};

}  // namespace graft::checkpoint
