#include "core/backend/cuda/gpu_mesh.h"

#include <algorithm>

#include "core/backend/cpu/shard_map_plan.h"
#include "core/error.h"

namespace graft::cuda {

std::vector<int> GpuMesh::members_on(int proc) const {
  std::vector<int> out;
  for (size_t k = 0; k < process.size(); ++k) {
    if (process[k] == proc) out.push_back(static_cast<int>(k));
  }
  return out;
}

GpuMesh gpu_mesh(const char* op, int64_t n, const std::vector<int>& gpus_per_process) {
  GpuMesh m;
  for (int proc = 0; proc < static_cast<int>(gpus_per_process.size()); ++proc) {
    for (int g = 0; g < gpus_per_process[proc] && static_cast<int64_t>(m.gpu.size()) < n; ++g) {
      m.process.push_back(proc);
      m.gpu.push_back(g);
    }
  }
  if (static_cast<int64_t>(m.gpu.size()) < n) {
    fail(op, "needs ", n, " CUDA devices, the ", gpus_per_process.size(),
         " processes have ", m.gpu.size());
  }
  return m;
}

NcclGroupPlan nccl_group_plan(const GpuMesh& mesh, const std::vector<int>& members, int me) {
  NcclGroupPlan plan;
  plan.size = static_cast<int>(members.size());
  for (int r = 0; r < plan.size; ++r) {
    const int proc = mesh.process[members[r]], gpu = mesh.gpu[members[r]];
    plan.key.emplace_back(proc, gpu);
    if (std::find(plan.procs.begin(), plan.procs.end(), proc) == plan.procs.end())
      plan.procs.push_back(proc);
    if (proc == me) {
      plan.local_ranks.push_back(r);
      plan.local_gpus.push_back(gpu);
    }
  }
  std::sort(plan.procs.begin(), plan.procs.end());
  plan.root = plan.key.empty() ? 0 : plan.key[0].first;
  return plan;
}

std::vector<std::vector<std::vector<int>>> group_members(const MeshAxes& mesh) {
  namespace plan = cpu::shard_plan;
  const int k = static_cast<int>(mesh.names.size());
  const int64_t n = mesh.size();
  std::vector<std::vector<std::vector<int>>> sets;
  for (int m = 1; m < (1 << k); ++m) {
    std::vector<int> in, out;
    int64_t size = 1;
    for (int a = 0; a < k; ++a) {
      if (m >> a & 1) {
        in.push_back(a);
        size *= mesh.sizes[a];
      } else {
        out.push_back(a);
      }
    }
    std::vector<std::vector<int>> groups(static_cast<size_t>(n / size),
                                         std::vector<int>(static_cast<size_t>(size)));
    for (int64_t dev = 0; dev < n; ++dev) {
      const std::vector<int64_t> c = plan::coords(dev, mesh);
      groups[plan::linear(c, mesh, out)][plan::linear(c, mesh, in)] = static_cast<int>(dev);
    }
    sets.push_back(std::move(groups));
  }
  return sets;
}

}  // namespace graft::cuda
