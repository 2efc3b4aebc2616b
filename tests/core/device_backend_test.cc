// How graft routes work to a device backend (core/backend/backend.h): arrays device_put on a
// device's memory are computed by the device backend (eager ops and jit), host operands go
// with them, values come back to the host for reading, operands on two devices are an error.
//
// No GPU here, so this binary registers a device backend of its own whose "device memory" is
// host memory wrapped as Buffer::DeviceMemory (device 0 or 1) and whose programs run through
// the CPU backend: what it checks is graft's routing, which the CUDA backend shares.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/backend/backend.h"
#include "core/device.h"
#include "core/ops.h"
#include "core/sharding.h"
#include "gtest/gtest.h"
#include "transforms/jit.h"

namespace graft {
namespace {

std::atomic<int> compiles{0}, runs{0}, live_blocks{0};

void release(void* data, size_t, int) {
  std::free(data);
  --live_blocks;
}

std::shared_ptr<Buffer> device_block(size_t bytes, int device) {
  ++live_blocks;
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  return std::make_shared<Buffer>(Buffer::DeviceMemory{p, bytes, device, &release});
}

class HostDeviceExecutable : public Executable {
 public:
  HostDeviceExecutable(std::shared_ptr<const Program> p, std::vector<bool> donated)
      : Executable(p, donated), cpu_(default_backend().compile(p, donated)) {}
  Buffers run_buffers(Buffers& args) const override {
    ++runs;
    int device = 0;
    for (const auto& a : args) {
      if (a && !a->on_host()) device = a->device();
    }
    Buffers outs = cpu_->run_buffers(args);  // device blocks are host-readable here
    for (auto& o : outs) {
      if (o->on_host()) {
        auto d = device_block(o->bytes(), device);
        if (o->bytes()) std::memcpy(d->data(), o->data(), o->bytes());
        o = d;
      }
    }
    return outs;
  }
  int64_t peak_bytes() const override { return cpu_->peak_bytes(); }
  int64_t total_bytes() const override { return cpu_->total_bytes(); }

 private:
  std::shared_ptr<const Executable> cpu_;
};

class HostDeviceBackend : public Backend {
 public:
  std::string_view name() const override { return "hostdev"; }
  std::shared_ptr<const Executable> compile(std::shared_ptr<const Program> p,
                                            std::vector<bool> donated) const override {
    ++compiles;
    return std::make_shared<HostDeviceExecutable>(std::move(p), std::move(donated));
  }
  std::shared_ptr<Buffer> allocate(size_t bytes, int device = 0) const override {
    return device_block(bytes, device);
  }
  void copy_to_host(const Buffer& src, void* dst, size_t bytes) const override {
    if (bytes) std::memcpy(dst, src.data(), bytes);
  }
  std::shared_ptr<Buffer> copy_from_host(const void* src, size_t bytes,
                                         int device = 0) const override {
    auto b = device_block(bytes, device);
    if (bytes) std::memcpy(b->data(), src, bytes);
    return b;
  }
  int device_count() const override { return 2; }
};

const bool registered = register_backend(std::make_unique<HostDeviceBackend>());

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
