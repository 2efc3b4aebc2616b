// main() of the gtest programs that run under mpirun: joins the processes
// (distributed::initialize) after gtest has taken its flags, then runs every test in each
// process.
#include <cstdio>
#include <string>

#include "core/distributed/mpi.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (absl::Status s = graft::distributed::initialize(); !s.ok()) {
    std::fprintf(stderr, "distributed::initialize: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return RUN_ALL_TESTS();
}
