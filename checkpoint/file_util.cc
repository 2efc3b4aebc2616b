#include "checkpoint/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace graft::checkpoint {

absl::Status errno_status(const char* what, const std::string& path) {
  int e = errno;
  std::string msg = std::string(what) + " " + path + ": " + std::strerror(e);
  switch (e) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(msg);
    case EEXIST:
      return absl::AlreadyExistsError(msg);
    case ENOSPC:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status write_all(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n < (size_t{1} << 30) ? n : (size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_status("write", path);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

FdCloser::~FdCloser() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status FdCloser::close() {
  int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) return errno_status("close", "file");
  return absl::OkStatus();
}

absl::Status write_file(const std::string& path, const std::string& text, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("open for writing", path);
  FdCloser closer(fd);
  absl::Status s = write_all(fd, text.data(), text.size(), path);
  if (s.ok() && sync && ::fsync(fd) != 0) s = errno_status("fsync", path);
  if (absl::Status c = closer.close(); s.ok()) s = c;
  return s;
}

absl::Status read_file(const std::string& path, std::string& out, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_status("open", path);
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno_status("stat", path);
  if (!S_ISREG(st.st_mode)) return absl::DataLossError(path + " is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::DataLossError(path + " is larger than " + std::to_string(max_bytes) + " bytes");
  }
  out.assign(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status("read", path);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return absl::OkStatus();
}

absl::Status fsync_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status("open directory", path);
  FdCloser closer(fd);
  if (::fsync(fd) != 0) return errno_status("fsync directory", path);
  return closer.close();
}

}  // namespace graft::checkpoint
