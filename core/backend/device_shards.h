// Arrays sharded over a mesh of the device backend's devices (GPUs): one buffer per shard,
// each in its device's memory.
//
// device_put(x, NamedSharding(Mesh(..., devices("cuda")), spec)) gives a leaf whose buffer is a
// sharded buffer: a Buffer::DeviceMemory whose device is kShardedDevices and whose data is its
// DeviceShards (a host object owned by that buffer: released with it, and its shards with it).
// Node keeps one buffer per output, so this is how an array holds several without a second
// kind of node. A sharded buffer is never handed to a kernel: graft's routing resolves it
// first. Reading the array (to_host) gathers the shards onto the host; an eager op or a jitted
// call over it (run_eager, Executable::run) runs on the device backend over its whole value
// gathered onto the mesh's first device (gather_sharded_args); jit places the outputs of a
// program partitioned over such a mesh as shards again (place_shards), so they stay sharded on
// their devices.
//
// The copies go through the host (the Backend interface has host copies only): any device
// backend works, and tests/core/backend:device_backend_test checks all of it on the CPU with a fake
// one. Threads: a DeviceShards is immutable once made; gathering and placing may run on any
// thread.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/backend/backend.h"
#include "core/sharding/mesh.h"

namespace graft {

// The device a sharded buffer reports (Buffer::device()); no real device has it.
inline constexpr int kShardedDevices = 1 << 30;

struct DeviceShards {
  NamedSharding sharding;  // over a mesh of the device backend's devices
  Shape shape;             // the whole array's
  DType dtype;
  // Per mesh position k (row-major, as NamedSharding::shard_index counts), its block in the
  // memory of the mesh's device k (the backend's device ordinal k).
  std::vector<std::shared_ptr<Buffer>> blocks;
};

// The shards of a sharded buffer; null for any other buffer.
const DeviceShards* device_shards(const Buffer& b);

// `host` (the whole array, row-major, in host memory) placed with `sharding`, a sharding over
// the device backend's devices: each mesh device gets a copy of its block. Returns the sharded
// buffer. "[device_put] ..." without a device backend.
std::shared_ptr<Buffer> place_shards(const Buffer& host, const Shape& shape, DType dtype,
                                     const NamedSharding& sharding);

// The whole array of a sharded buffer: in host memory (device < 0) or in the device backend's
// device `device`.
std::shared_ptr<Buffer> gather_shards(const DeviceShards& s, int device);

// The device an op over these buffers runs on: that of the first one in a device's memory,
// else the first device of the first sharded one's mesh (its blocks are gathered there); -1
// when all live on the host. "[eval] ..." when two of them live on different devices.
int placement_device(const std::shared_ptr<Buffer>* const* buffers, size_t n);

// Replaces each sharded buffer in `args` by its whole value on `device` (placement_device of
// them); returns whether there was one.
bool gather_sharded_args(Buffers& args, int device);

}  // namespace graft
