// The plan of a shard_map's run over the devices of its mesh, shared by the CPU's kernel
// (shard_map_kernel.cc: virtual devices) and the CUDA backend's (core/backend/cuda/
// shard_map_kernel.cc: GPUs). Both run member k on mesh device k, on that device's own
// thread (device_streams.h), with the same blocks of the inputs and outputs and the same
// in-process groups per set of mesh axes (core/distributed/in_process.h), which the
// collective kernels of either backend find through distributed::membership. What differs is
// only where the blocks live and how a collective moves data (shared memory / MPI on the CPU,
// NCCL on GPUs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/distributed/in_process.h"
#include "core/primitives/shard_map.h"

namespace graft::cpu::shard_plan {

constexpr int kMaxMeshAxes = 6;  // groups for every subset of the axes: 2^6 - 1 sets at most

// Row-major linearization of coordinates `c` over the mesh axes `axes`.
int64_t linear(const std::vector<int64_t>& c, const MeshAxes& mesh, const std::vector<int>& axes);

// Where device `c`'s block of an array of shape `full` sits: the block's shape and the
// element offset of its first element.
struct Block {
  Shape shape;
  int64_t offset = 0;
};
Block block_at(const Shape& full, const DimAxes& spec, const MeshAxes& mesh,
               const std::vector<int64_t>& c);

// Whether the spec splits some dimension.
bool split(const DimAxes& spec);

// Mesh device `dev`'s coordinates.
std::vector<int64_t> coords(int64_t dev, const MeshAxes& mesh);

// The mesh axes a spec names: the coordinates on them say which block a device holds.
std::vector<int> named_axes(const DimAxes& spec, int k);

// The groups of one set of mesh axes (a bit mask over mesh axis indices).
struct AxisSet {
  AxisMask axes = 0;         // global axis bits (core/sharding/axis.h)
  std::vector<int> in, out;  // mesh axes in the set, and the others
  std::vector<std::unique_ptr<distributed::InProcessGroup>> groups;
  // Per group: where its members live, when some are on other processes (else null).
  std::vector<std::unique_ptr<distributed::GroupLayout>> layouts;
};

// The groups of every set of mesh axes, with the layouts of those spanning processes
// (process_of: per mesh device, its process).
std::vector<AxisSet> make_groups(const MeshAxes& mesh, const std::vector<int>& process_of);

// Makes the calling thread mesh device `dev`'s member of its group in every set while the
// result lives.
std::vector<std::unique_ptr<distributed::MemberScope>> join_groups(std::vector<AxisSet>& sets,
                                                                   const MeshAxes& mesh,
                                                                   int64_t dev);

// Makes every waiting and later collective of the groups fail with `why` (a member failed).
void abort_groups(std::vector<AxisSet>& sets, const std::string& why);

// Per output, per member (in `members` order): whether it writes its block (the first member
// holding that block does; the others hold copies of it).
std::vector<std::vector<bool>> first_writers(const ShardMap& p, const std::vector<int>& members);

// In a multi-process run every process ends with the whole of every output: each block is
// sent by the process of the first mesh device holding it to the processes that hold it on no
// device of their own. outs[o]: output o (of aval avals[o]) in host memory, whole, with the
// blocks of this process's devices written.
void write_back(const ShardMap& p, const std::vector<int>& process_of,
                const std::vector<Aval>& avals, const std::vector<char*>& outs);

// "[shard_map] ..." unless the mesh has at most kMaxMeshAxes axes and `available` devices
// or more.
void check_mesh(const ShardMap& p, int available, const char* kind);

}  // namespace graft::cpu::shard_plan
