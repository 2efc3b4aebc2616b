// distributed::initialize's errors, each in a child process started alone (an MPI world of
// one: OpenMPI's singleton start): a bad GRAFT_DISTRIBUTED_TIMEOUT_S, a bad GRAFT_CPU_DEVICES,
// and a call after the devices were read; and a good start, a world of one process.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Runs `check` in a child; its exit status (0: as expected).
int in_child(const std::function<int()>& check) {
  pid_t pid = fork();
  if (pid == 0) _exit(check());
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

bool says(const absl::Status& s, absl::StatusCode code, const std::string& what) {
  return s.code() == code && std::string(s.message()).find(what) != std::string::npos;
}

TEST(MpiInitTest, ABadTimeoutIsInvalidArgumentNamingIt) {
  EXPECT_EQ(in_child([] {
              setenv("GRAFT_DISTRIBUTED_TIMEOUT_S", "soon", 1);
              return says(distributed::initialize(), absl::StatusCode::kInvalidArgument,
                          "GRAFT_DISTRIBUTED_TIMEOUT_S=soon")
                         ? 0
                         : 1;
            }),
            0);
}

TEST(MpiInitTest, ABadDeviceCountIsInvalidArgumentNamingIt) {
  EXPECT_EQ(in_child([] {
              setenv("GRAFT_CPU_DEVICES", "two", 1);
              return says(distributed::initialize(), absl::StatusCode::kInvalidArgument,
                          "GRAFT_CPU_DEVICES=two")
                         ? 0
                         : 1;
            }),
            0);
}

TEST(MpiInitTest, AfterTheDevicesWereReadIsFailedPrecondition) {
  EXPECT_EQ(in_child([] {
              setenv("GRAFT_CPU_DEVICES", "2", 1);
              if (device_count() != 2) return 2;
              const absl::Status s = distributed::initialize();
              if (!says(s, absl::StatusCode::kFailedPrecondition, "before the devices")) return 1;
              return device_count() == 2 && process_count() == 1 ? 0 : 3;  // nothing changed
            }),
            0);
}

TEST(MpiInitTest, StartedAloneIsAWorldOfOne) {
  EXPECT_EQ(in_child([] {
              setenv("GRAFT_CPU_DEVICES", "3", 1);
              if (!distributed::initialize().ok()) return 1;
              if (!distributed::initialized() || !distributed::initialize().ok()) return 2;
              return device_count() == 3 && process_count() == 1 && process_index() == 0 ? 0 : 3;
            }),
            0);
}

}  // namespace
}  // namespace graft
