// The README shows tests/docs/readme_program.cc ("What a program looks like"), which
// //tests/docs:readme_program builds and runs; its copy between the readme_program markers
// must be that file, so the README's program always compiles and runs.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/util/doc_block.h"

namespace {

std::string read_runfile(const std::string& path) {
  std::ifstream in(path);
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (!in && srcdir) in.open(std::string(srcdir) + "/graft/" + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReadmeProgram, TheReadmeShowsTheTestedFile) {
  const std::string file = read_runfile("tests/docs/readme_program.cc");
  ASSERT_FALSE(file.empty()) << "tests/docs/readme_program.cc not found";
  EXPECT_EQ(graft::testing::doc_block("README.md", "readme_program"), "```cpp\n" + file + "```\n")
      << "README.md's block between the readme_program markers is not tests/docs/"
         "readme_program.cc in a ```cpp fence";
}

}  // namespace
