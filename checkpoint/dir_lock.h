// An exclusive lock on a checkpoint folder: flock(2) on <dir>/_LOCK, held while the DirLock
// lives. Two writers on one folder would delete each other's temporary directories, so the
// second one is refused, with the holder's pid and host (written into the lock file) in the
// message. flock locks belong to an open file description: a second manager in the same
// process is refused too, and the kernel drops the lock of a process that dies.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "checkpoint/metadata.h"

namespace graft::checkpoint {

class DirLock {
 public:
  // FailedPrecondition "... is in use by pid P on host H ..." when another holder has it;
  // PermissionDenied naming the folder when the lock file cannot be created there (a
  // read-only copy: nothing could be saved). Where the file system has no flock (some network
  // or FUSE mounts), warns on stderr and returns an unlocked DirLock.
  static absl::StatusOr<DirLock> acquire(const std::string& dir);
  DirLock(DirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace graft::checkpoint
