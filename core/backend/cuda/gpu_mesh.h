// Where the members of a shard_map's mesh of GPUs live when the run has several processes, and
// how each group of them (per set of mesh axes and slice of the mesh) gets its NCCL
// communicator. Plain C++ (no CUDA), built in every configuration: tests/cuda:gpu_mesh_test
// checks it on the CPU; shard_map_kernel.cc and collective_kernels.cc use it.
//
// Mesh member k is GPU k of the run: the processes' GPUs numbered in process order, each
// process's in its own order, as the CPU's virtual devices are numbered across processes
// (core/distributed/mpi.h). Each process runs the members on its own GPUs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/primitives/shard_map.h"

namespace graft::cuda {

struct GpuMesh {
  std::vector<int> process;  // per member: its process
  std::vector<int> gpu;      // per member: its GPU (CUDA ordinal) on that process
  // The members on process `proc`, ascending.
  std::vector<int> members_on(int proc) const;
};

// The first n GPUs of the run, given each process's GPU count; "[op] ..." when there are fewer.
GpuMesh gpu_mesh(const char* op, int64_t n, const std::vector<int>& gpus_per_process);

// How process `me` takes part in one group's NCCL communicator. The communicator's ranks are
// the group's ranks; the process of rank 0 makes the ncclUniqueId and sends it to the group's
// other processes (over MPI); each process then makes the ranks of its own members
// (ncclCommInitRank, one NCCL group call for all of them).
struct NcclGroupPlan {
  int size = 0;
  std::vector<int> procs;        // the processes with members, ascending
  int root = 0;                  // the process of rank 0
  std::vector<int> local_ranks;  // this process's members' ranks, ascending
  std::vector<int> local_gpus;   // and their GPUs
  // Per rank its (process, GPU): names the group in every process alike, so it keys the
  // communicators' cache (one set of communicators per set of GPUs, whichever axes).
  std::vector<std::pair<int, int>> key;
};
NcclGroupPlan nccl_group_plan(const GpuMesh& mesh, const std::vector<int>& members, int me);

// The groups of a mesh in shard_plan::make_groups' order: per set of mesh axes (bit mask
// 1 .. 2^k - 1 over the mesh axes), per group (its coordinates on the other axes, row-major),
// the mesh members by group rank (their coordinates on the set's axes, row-major).
std::vector<std::vector<std::vector<int>>> group_members(const MeshAxes& mesh);

}  // namespace graft::cuda
