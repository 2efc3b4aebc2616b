#include "tests/util/doc_block.h"

#include <cstdlib>
#include <fstream>

namespace graft::testing {

std::string doc_block(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (!in && srcdir) in.open(std::string(srcdir) + "/graft/" + path);
  const std::string begin = "<!-- " + name + ": begin -->", end = "<!-- " + name + ": end -->";
  std::string block;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == begin) {
      inside = true;
    } else if (line == end) {
      return inside ? block : "";
    } else if (inside) {
      block += line + "\n";
    }
  }
  return "";
}

}  // namespace graft::testing
