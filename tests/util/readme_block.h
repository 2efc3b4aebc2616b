// A block of README.md that a test generates: the lines between "<!-- <name>: begin -->" and
// "<!-- <name>: end -->". A test that prints a table the README shows compares the two, so
// that the README cannot drift from what the test checks (the test's BUILD rule lists
// //:README.md as data).
#pragma once

#include <string>

namespace graft::testing {

// The text between the markers (each line with its "\n"); empty when README.md or a marker
// is missing.
std::string readme_block(const std::string& name);

}  // namespace graft::testing
