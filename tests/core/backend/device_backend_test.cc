// How graft routes work to a device backend (core/backend/backend.h): arrays device_put on a
// device's memory are computed by the device backend (eager ops and jit), host operands go
// with them, values come back to the host for reading, operands on two devices are an error.
//
// No GPU here, so this binary registers a device backend of its own whose "device memory" is
// host memory wrapped as Buffer::DeviceMemory (device 0 or 1) and whose programs run through
// the CPU backend (tests/core/backend/host_device_backend.h): what it checks is graft's routing, which
// the CUDA backend shares. Arrays sharded over a mesh of those two devices:
// device_backend_sharding_test.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/backend/backend.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/core/backend/host_device_backend.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using host_device::compiles;
using host_device::live_blocks;
using host_device::runs;

const bool registered = host_device::register_host_device_backend();

TEST(DeviceBackendTest, DevicesOfAPlatform) {
  ASSERT_NE(device_backend(), nullptr);
  EXPECT_EQ(default_backend().name(), "cpu");
  EXPECT_EQ(devices("cpu").size(), devices().size());
  std::vector<Device> gpus = devices("cuda");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].str(), "cuda:1");
  EXPECT_THROW(devices("tpu"), Error);
}

TEST(DeviceBackendTest, DevicePutMovesToDeviceMemoryAndBack) {
  Array x = arange(0.0, 6.0, 1.0);
  Array on = device_put(x, devices("cuda")[1]);
  EXPECT_FALSE(on.buffer()->on_host());
  EXPECT_EQ(on.buffer()->device(), 1);
  EXPECT_EQ(on.to_vector<float>(), x.to_vector<float>());  // read through a host copy
  try {
    on.raw_data();
    ADD_FAILURE() << "raw_data of device memory must throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[raw_data]", 0), 0u) << e.what();
  }
  Array back = device_put(on, devices()[0]);
  EXPECT_TRUE(back.buffer()->on_host());
  EXPECT_EQ(back.to_vector<float>(), x.to_vector<float>());
  EXPECT_THROW(device_put(x, Device{2, 0, "cuda"}), Error);
}

TEST(DeviceBackendTest, EagerOpsOnDeviceArraysRunOnTheDeviceBackend) {
  Array x = device_put(arange(0.0, 4.0, 1.0), devices("cuda")[0]);
  const int before = runs;
  Array y = exp(x) + ones({4});  // a device operand and a host one
  EXPECT_FALSE(y.buffer()->on_host());
  EXPECT_EQ(y.buffer()->device(), 0);
  EXPECT_GE(runs - before, 2);
  std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], std::exp(static_cast<float>(i)) + 1.0f);
  // Host-only work stays on the CPU backend.
  const int host_before = runs;
  Array h = exp(arange(0.0, 4.0, 1.0));
  EXPECT_TRUE(h.buffer()->on_host());
  EXPECT_EQ(runs, host_before);
}

TEST(DeviceBackendTest, JitRunsWhereItsArgumentsLive) {
  auto f = jit([](const Array& a, const Array& b) { return sum(a * b); });
  Array a = arange(0.0, 8.0, 1.0), b = ones({8});
  EXPECT_FLOAT_EQ(f(a, b).item<float>(), 28.0f);
  EXPECT_TRUE(f(a, b).buffer()->on_host());
  const int before = runs;
  Array on = f(device_put(a, devices("cuda")[0]), b);
  EXPECT_EQ(runs - before, 1);  // the whole program, once
  EXPECT_FALSE(on.buffer()->on_host());
  EXPECT_FLOAT_EQ(on.item<float>(), 28.0f);
}

TEST(DeviceBackendTest, OperandsOnTwoDevicesAreAnError) {
  Array a = device_put(ones({3}), devices("cuda")[0]);
  Array b = device_put(ones({3}), devices("cuda")[1]);
  try {
    (a + b).buffer();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[eval]", 0), 0u) << e.what();
  }
}

TEST(DeviceBackendTest, DeviceMemoryIsReleasedThroughTheBackend) {
  const int before = live_blocks;
  {
    Array x = device_put(ones({1024}), devices("cuda")[0]);
    Array y = x * 2.0;
    EXPECT_FLOAT_EQ(y.to_vector<float>()[1023], 2.0f);
    EXPECT_GT(live_blocks, before);
  }
  EXPECT_EQ(live_blocks, before);
}

}  // namespace
}  // namespace graft
