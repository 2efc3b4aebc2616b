#include "checkpoint/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "checkpoint/file_util.h"

namespace graft::checkpoint {

namespace {

std::string holder_text() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  const std::time_t now = std::time(nullptr);
  char when[32] = {};
  std::tm tm{};
  if (::gmtime_r(&now, &tm)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "pid " + std::to_string(::getpid()) + " on host " + host + " since " + when;
}

}  // namespace

absl::StatusOr<DirLock> DirLock::acquire(const std::string& dir) {
  const std::string path = dir + "/" + kLockFile;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && (errno == EROFS || errno == EACCES)) {
    // Nothing could be saved here either: say so now, not at the first save after training.
    return absl::PermissionDeniedError(
        "checkpoint directory " + dir + " cannot be written (" + std::strerror(errno) +
        ": cannot create " + path + "), so no step could be saved there; use another "
        "directory, or open it read_only to restore from it");
  }
  if (fd < 0) return errno_status("open lock file", path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    if (e == EWOULDBLOCK) {
      // The holder writes its line right after locking: an empty read is a holder that has
      // just started.
      char buf[256] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      std::string who = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
      while (!who.empty() && (who.back() == '\n' || who.back() == '\r')) who.pop_back();
      if (who.empty()) who = "another process (it has not written its pid yet)";
      return absl::FailedPreconditionError(
          "checkpoint directory " + dir + " is in use by " + who + " (lock file " + path +
          "): one CheckpointManager writes a directory at a time; stop the other run or use "
          "another directory");
    }
    ::close(fd);
    if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) {
      std::fprintf(stderr,
                   "checkpoint: %s cannot be locked (%s); not protected against a "
                   "second writer\n",
                   path.c_str(), std::strerror(e));
      return DirLock(-1);
    }
    errno = e;
    return errno_status("flock", path);
  }
  const std::string line = holder_text() + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) < 0) {
    absl::Status s = errno_status("write lock file", path);
    ::close(fd);
    return s;
  }
  return DirLock(fd);
}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock; the file stays (unlinking it would race)
}

}  // namespace graft::checkpoint
