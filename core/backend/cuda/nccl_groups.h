// The NCCL plans (gpu_mesh.h) of the groups of the shard_maps running on GPUs, registered by
// shard_map_kernel.cc for the call and found by the collective kernels (collective_kernels.cc)
// through the in-process group their membership names. Built only with --config=cuda.
#pragma once

#include <vector>

#include "core/backend/cuda/gpu_mesh.h"
#include "core/distributed/in_process.h"

namespace graft::cuda {

// Registers `plans[i]` for `groups[i]` while it lives.
class GroupPlansScope {
 public:
  GroupPlansScope(std::vector<const distributed::InProcessGroup*> groups,
                  std::vector<NcclGroupPlan> plans);
  ~GroupPlansScope();
  GroupPlansScope(const GroupPlansScope&) = delete;
  GroupPlansScope& operator=(const GroupPlansScope&) = delete;

 private:
  std::vector<const distributed::InProcessGroup*> groups_;
};

}  // namespace graft::cuda
