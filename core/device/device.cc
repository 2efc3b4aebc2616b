#include "core/device/device.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "core/error.h"
#include "core/device/runtime.h"

namespace graft {

absl::StatusOr<int> cpu_device_count_from_env(const char* value) {
  if (value == nullptr || *value == '\0') return 1;
  const std::string s(value);
  bool digits = s.size() <= 5;
  for (char c : s) digits = digits && c >= '0' && c <= '9';
  const int n = digits ? std::atoi(s.c_str()) : 0;
  if (!digits || n < 1 || n > kMaxCpuDevices) {
    return absl::InvalidArgumentError("GRAFT_CPU_DEVICES=" + s +
                                      " is not a device count (a whole number from 1 to " +
                                      std::to_string(kMaxCpuDevices) + ")");
  }
  return n;
}

namespace {

struct World {
  absl::StatusOr<int> count;  // this process's devices, or why there are none
  std::vector<Device> devices;
  int process_index = 0;
  int process_count = 1;
};

// What distributed::initialize set before the world was first read (null: one process).
struct ProcessWorld {
  int index = 0;
  std::vector<int> local_counts;
};
std::mutex world_mu;
ProcessWorld* pending = nullptr;  // guarded by world_mu
bool world_read = false;          // guarded by world_mu

const World& world() {
  static const World* w = [] {
    std::lock_guard<std::mutex> lock(world_mu);
    world_read = true;
    auto* out = new World{cpu_device_count_from_env(std::getenv("GRAFT_CPU_DEVICES")), {}};
    if (!out->count.ok()) return out;
    if (pending == nullptr) {
      for (int i = 0; i < *out->count; ++i) out->devices.push_back(Device{i, 0, "cpu"});
      return out;
    }
    out->process_index = pending->index;
    out->process_count = static_cast<int>(pending->local_counts.size());
    int id = 0;
    for (int p = 0; p < out->process_count; ++p) {
      for (int i = 0; i < pending->local_counts[p]; ++i) out->devices.push_back(Device{id++, p, "cpu"});
    }
    return out;
  }();
  return *w;
}

}  // namespace

const std::vector<Device>& devices() {
  const World& w = world();
  if (!w.count.ok()) fail("devices", std::string(w.count.status().message()));
  return w.devices;
}

std::vector<Device> devices(std::string_view platform) {
  if (platform == "cpu") return devices();
  if (platform != "cuda" && platform != "gpu") {
    fail("devices", "unknown platform \"", platform, "\" (cpu, cuda or gpu)");
  }
  std::vector<Device> out;
  const int gpus = runtime("devices").gpu_count();
  for (int k = 0; k < gpus; ++k) {
    out.push_back(Device{k, process_index(), "cuda"});
  }
  return out;
}

std::vector<Device> local_devices() {
  std::vector<Device> out;
  for (const Device& d : devices()) {
    if (d.process_index == process_index()) out.push_back(d);
  }
  return out;
}

int device_count() { return static_cast<int>(devices().size()); }
int local_device_count() { return static_cast<int>(local_devices().size()); }
int process_index() { return world().process_index; }
int process_count() { return world().process_count; }

namespace detail {

absl::Status set_process_world(int index, std::vector<int> local_counts) {
  std::lock_guard<std::mutex> lock(world_mu);
  if (world_read) {
    return absl::FailedPreconditionError(
        "distributed::initialize must come before the devices are first used (devices(), an "
        "op that places arrays, a shard_map): the device world is fixed then");
  }
  const int n = static_cast<int>(local_counts.size());
  if (index < 0 || index >= n) {
    return absl::InvalidArgumentError("process index " + std::to_string(index) +
                                      " is not in a world of " + std::to_string(n) + " processes");
  }
  int64_t total = 0;
  for (int c : local_counts) {
    if (c < 1) return absl::InvalidArgumentError("a process has no devices");
    total += c;
  }
  if (total > kMaxCpuDevices) {
    return absl::InvalidArgumentError("the processes present " + std::to_string(total) +
                                      " devices, more than " + std::to_string(kMaxCpuDevices));
  }
  delete pending;
  pending = new ProcessWorld{index, std::move(local_counts)};
  return absl::OkStatus();
}

}  // namespace detail

}  // namespace graft
