// Writing a file all or nothing: the bytes go to a per-process temporary (<path>.tmp.<pid>)
// that is written with write(2), fsynced, closed and renamed onto path. On every failure
// (disk full, quota, file size limit, permissions) the temporary is removed and the status
// names the file and the cause (strerror): ResourceExhausted for ENOSPC / EDQUOT / EFBIG,
// PermissionDenied for EACCES / EPERM / EROFS, Internal otherwise.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace graft::data {

// The status for a failed system call: `what` and strerror(e), with the code chosen as above.
absl::Status errno_status(const std::string& what, int e);

// The temporary that write_file_atomically uses for path (exposed for tests).
std::string temp_path_for(const std::string& path);

// Writes the parts, in order, as the new content of path.
absl::Status write_file_atomically(const std::string& path,
                                   std::initializer_list<std::string_view> parts);

}  // namespace graft::data
