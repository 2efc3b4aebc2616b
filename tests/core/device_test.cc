// The device list: GRAFT_CPU_DEVICES parsing (bad values are InvalidArgument naming the value)
// and the devices a process with GRAFT_CPU_DEVICES=8 presents.
#include "core/device.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

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
