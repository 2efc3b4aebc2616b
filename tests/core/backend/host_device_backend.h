// A device backend for tests on the CPU: its "device memory" is host memory wrapped as
// Buffer::DeviceMemory (devices 0 and 1) and its programs run through the CPU backend. What a
// test over it checks is graft's routing (core/backend/backend.h) and placement over devices
// (core/backend/device_shards.h), which the CUDA backend shares. A test binary registers it
// from a static initializer, before any device is read:
//
//   const bool registered = graft::host_device::register_host_device_backend();
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/backend/backend.h"

namespace graft::host_device {

// Programs compiled and run by it, and its device blocks alive now.
inline std::atomic<int> compiles{0}, runs{0}, live_blocks{0};

inline void release(void* data, size_t, int) {
  std::free(data);
  --live_blocks;
}

inline std::shared_ptr<Buffer> device_block(size_t bytes, int device) {
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

inline bool register_host_device_backend() {
  return register_backend(std::make_unique<HostDeviceBackend>());
}

}  // namespace graft::host_device
