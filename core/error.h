// graft::Error: misuse of an op, thrown at trace time. Messages start with the op in
// brackets, e.g. "[matmul] contracting dims differ: (4, 8) @ (9, 2)".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace graft {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// An exchange between processes that failed: a partner that did not answer in time (it died,
// or runs something else), or an MPI error. A training program reports it as Unavailable, not
// as a bug of its model.
class DistributedError : public Error {
 public:
  using Error::Error;
};

// Concatenates anything std::ostream can print (Debian's absl::StrCat takes neither
// std::string_view nor graft's types), for error and status messages.
template <typename... Parts>
std::string str_cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// Throws graft::Error("[op] " + parts...).
template <typename... Parts>
[[noreturn]] void fail(std::string_view op, const Parts&... parts) {
  throw Error(str_cat("[", op, "] ", parts...));
}

}  // namespace graft
