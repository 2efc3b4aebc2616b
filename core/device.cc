#include "core/device.h"

#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "core/error.h"

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
  absl::StatusOr<int> count;
  std::vector<Device> devices;
};

const World& world() {
  static const World* w = [] {
    auto* out = new World{cpu_device_count_from_env(std::getenv("GRAFT_CPU_DEVICES")), {}};
    if (out->count.ok()) {
      for (int i = 0; i < *out->count; ++i) out->devices.push_back(Device{i, 0, "cpu"});
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

std::vector<Device> local_devices() {
  std::vector<Device> out;
  for (const Device& d : devices()) {
    if (d.process_index == process_index()) out.push_back(d);
  }
  return out;
}

int device_count() { return static_cast<int>(devices().size()); }
int local_device_count() { return static_cast<int>(local_devices().size()); }
int process_index() { return 0; }
int process_count() { return 1; }

}  // namespace graft
