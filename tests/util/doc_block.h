// A block of a markdown page (README.md or a page under docs/) that a test generates: the
// lines between "<!-- <name>: begin -->" and "<!-- <name>: end -->". A test that prints a
// table a page shows compares the two, so that the page cannot drift from what the test checks
// (the test's BUILD rule lists the page as data: //:README.md, or //docs:<page>.md).
#pragma once

#include <string>

namespace graft::testing {

// The text between the markers in `path` (relative to the workspace root, e.g.
// "docs/arrays-and-ops.md"), each line with its "\n"; empty when the file or a marker is
// missing.
std::string doc_block(const std::string& path, const std::string& name);

}  // namespace graft::testing
