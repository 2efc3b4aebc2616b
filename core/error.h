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

// Throws graft::Error("[op] " + parts...).
// Parts are anything std::ostream can print.
template <typename... Parts>
[[noreturn]] void fail(std::string_view op, const Parts&... parts) {
  std::ostringstream os;
  os << "[" << op << "] ";
  (os << ... << parts);
  throw Error(os.str());
}

}  // namespace graft
