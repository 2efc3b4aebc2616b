// The device list: GRAFT_CPU_DEVICES parsing (bad values are InvalidArgument naming the value)
// and the devices a process with GRAFT_CPU_DEVICES=8 presents.
#include "core/device/device.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Set before main, so this process's first devices() call reads it.
const bool kEightDevices = setenv("GRAFT_CPU_DEVICES", "8", 1) == 0;

// First in the file: the child must be the first in its process to read the device list.
TEST(DeviceTest, ABadCountMakesDevicesThrowNamingIt) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("GRAFT_CPU_DEVICES", "eight", 1);
    try {
      devices();
      _exit(1);
    } catch (const Error& e) {
      _exit(std::string(e.what()).rfind("[devices] GRAFT_CPU_DEVICES=eight", 0) == 0 ? 0 : 2);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: another message";
}

// A process world set before the devices are read (what distributed::initialize does after
// MPI told it the ranks): this process is 1 of 3 with 2, 8 and 3 devices. Checked in a child,
// the first reader of the list there; bad worlds are refused first.
TEST(DeviceTest, AProcessWorldNumbersDevicesAfterThePreviousProcesses) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int bad = 10;
    if (detail::set_process_world(3, {2, 8, 3}).code() != absl::StatusCode::kInvalidArgument) _exit(bad);
    if (detail::set_process_world(0, {2, 0}).code() != absl::StatusCode::kInvalidArgument) _exit(bad + 1);
    if (!detail::set_process_world(1, {2, 8, 3}).ok()) _exit(bad + 2);
    if (device_count() != 13 || process_count() != 3 || process_index() != 1) _exit(bad + 3);
    std::vector<Device> local = local_devices();
    if (local.size() != 8 || local[0].id != 2 || local[7].id != 9) _exit(bad + 4);
    if (devices()[1].process_index != 0 || devices()[10].process_index != 2) _exit(bad + 5);
    // Fixed once read.
    if (detail::set_process_world(0, {13}).code() != absl::StatusCode::kFailedPrecondition) {
      _exit(bad + 6);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the check numbered (status - 10) failed";
}

TEST(DeviceTest, ParsesTheCpuDeviceCount) {
  EXPECT_EQ(*cpu_device_count_from_env(nullptr), 1);
  EXPECT_EQ(*cpu_device_count_from_env(""), 1);
  EXPECT_EQ(*cpu_device_count_from_env("8"), 8);
  EXPECT_EQ(*cpu_device_count_from_env("4096"), 4096);
  for (const char* bad : {"0", "-2", "4097", "8x", "eight", " 8", "1e3", "999999999999"}) {
    absl::StatusOr<int> n = cpu_device_count_from_env(bad);
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(n.status().message()).find(std::string("GRAFT_CPU_DEVICES=") + bad),
              std::string::npos)
        << n.status().message();
  }
}

TEST(DeviceTest, EightVirtualCpuDevices) {
  ASSERT_TRUE(kEightDevices);
  ASSERT_EQ(device_count(), 8);
  EXPECT_EQ(local_device_count(), 8);
  EXPECT_EQ(process_count(), 1);
  EXPECT_EQ(process_index(), 0);
  std::set<int> ids;
  for (size_t i = 0; i < devices().size(); ++i) {
    const Device& d = devices()[i];
    EXPECT_EQ(d.id, static_cast<int>(i));
    EXPECT_EQ(d.platform, "cpu");
    EXPECT_EQ(d.str(), "cpu:" + std::to_string(i));
    ids.insert(d.id);
  }
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_EQ(local_devices(), devices());
}

}  // namespace
}  // namespace graft
