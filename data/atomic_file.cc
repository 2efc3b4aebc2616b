#include "data/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace graft::data {

absl::Status errno_status(const std::string& what, int e) {
  const std::string msg = what + ": " + std::strerror(e);
  switch (e) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

namespace {

absl::Status write_all(int fd, std::string_view bytes, const std::string& tmp) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status("writing " + tmp, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

std::string temp_path_for(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

absl::Status write_file_atomically(const std::string& path,
                                   std::initializer_list<std::string_view> parts) {
  const std::string tmp = temp_path_for(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create " + tmp, errno);
  absl::Status s;
  for (std::string_view part : parts) {
    if (s = write_all(fd, part, tmp); !s.ok()) break;
  }
  // A full disk may show only here (delayed allocation, network file systems).
  if (s.ok() && ::fsync(fd) != 0) s = errno_status("fsync " + tmp, errno);
  if (::close(fd) != 0 && s.ok()) s = errno_status("closing " + tmp, errno);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = errno_status("rename " + tmp + " -> " + path, errno);
  }
  if (!s.ok()) ::unlink(tmp.c_str());  // never left behind
  return s;
}

}  // namespace graft::data
