// Devices, like jax.devices(): the CPU presents N virtual devices (GRAFT_CPU_DEVICES=N, as
// XLA's --xla_force_host_platform_device_count), numbered 0..N-1 in one process.
//
//   for (const graft::Device& d : graft::devices()) std::cout << d.str() << "\n";  // cpu:0 ...
//
// shard_map and pmap (transforms/shard_map.h, pmap.h) run member k on device k's execution stream
// (the CPU backend's worker thread for it).
//
// Several processes (mpirun -np P) join into one world with distributed::initialize()
// (core/distributed/mpi.h), called before the devices are first read: each process presents
// its own GRAFT_CPU_DEVICES devices, numbered after those of the processes before it, so
// devices() lists the whole world and local_devices() this process's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace graft {

struct Device {
  int id = 0;             // global id, 0..device_count()-1
  int process_index = 0;  // the process that owns it
  std::string platform = "cpu";
  std::string str() const { return platform + ":" + std::to_string(id); }
  bool operator==(const Device& o) const { return id == o.id && platform == o.platform; }
};

inline constexpr int kMaxCpuDevices = 4096;

// The CPU device count a GRAFT_CPU_DEVICES value asks for: unset or empty -> 1; a whole
// number in [1, kMaxCpuDevices] -> that; anything else -> InvalidArgument naming the value.
absl::StatusOr<int> cpu_device_count_from_env(const char* value);

// All devices (read from GRAFT_CPU_DEVICES on first use and fixed for the process). A bad
// GRAFT_CPU_DEVICES is a graft::Error ("[devices] GRAFT_CPU_DEVICES=...") on every call.
const std::vector<Device>& devices();
// The devices of one platform: "cpu" (devices()), or "cuda" / "gpu": this process's GPUs,
// cuda:0..N-1 (graft built with --config=cuda on a machine with GPUs; empty otherwise).
// device_put(x, devices("cuda")[k]) places x in GPU k's memory; ops on it then run there.
// graft::Error "[devices] ..." for another platform name.
std::vector<Device> devices(std::string_view platform);
// The devices of this process.
std::vector<Device> local_devices();
int device_count();
int local_device_count();
int process_index();  // 0 in a one-process run
int process_count();  // 1 unless distributed::initialize joined several

namespace detail {
// Makes this process `index` of a world whose processes have local_counts[p] devices each
// (distributed::initialize calls it). FailedPrecondition if the devices were already read
// (the world is fixed on first use, as in JAX); InvalidArgument if the counts do not fit.
absl::Status set_process_world(int index, std::vector<int> local_counts);
}  // namespace detail

}  // namespace graft
