// The plan of a mesh of GPUs over processes (core/backend/cuda/gpu_mesh.h), plain C++ checked
// on the CPU in every build: which process and GPU each mesh member is, which members form
// each group (checked against the CPU's groups, shard_plan::make_groups, which the collective
// kernels meet in), and how each group's NCCL communicator is made (who makes the id, which
// ranks each process makes, the cache key).
#include "core/backend/cuda/gpu_mesh.h"

#include <string>
#include <utility>
#include <vector>

#include "core/backend/cpu/shard_map_plan.h"
#include "core/error.h"
#include "gtest/gtest.h"

namespace graft::cuda {
namespace {

using Key = std::vector<std::pair<int, int>>;

TEST(GpuMeshTest, MembersAreTheProcessesGpusInProcessOrder) {
  GpuMesh m = gpu_mesh("shard_map", 4, {2, 2});
  EXPECT_EQ(m.process, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(m.gpu, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(m.members_on(1), (std::vector<int>{2, 3}));
  m = gpu_mesh("shard_map", 3, {1, 3, 2});  // the first 3 of 6
  EXPECT_EQ(m.process, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(m.gpu, (std::vector<int>{0, 0, 1}));
  EXPECT_TRUE(m.members_on(2).empty());
  m = gpu_mesh("shard_map", 2, {2});  // one process: GPU k is member k
  EXPECT_EQ(m.process, (std::vector<int>{0, 0}));
  EXPECT_EQ(m.gpu, (std::vector<int>{0, 1}));
}

TEST(GpuMeshTest, TooFewGpusIsAnError) {
  try {
    gpu_mesh("shard_map", 5, {2, 2});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shard_map"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs 5 CUDA devices"), std::string::npos) << e.what();
  }
}

// A 2 x 2 mesh: per axis set, its groups' members by rank, as written out by hand.
TEST(GpuMeshTest, GroupMembersPerAxisSet) {
  const MeshAxes mesh{{"gm_a", "gm_b"}, {2, 2}};
  const auto sets = group_members(mesh);
  ASSERT_EQ(sets.size(), 3u);
  // {a}: one group per b, ranks along a; {b}: one per a; {a, b}: all four.
  EXPECT_EQ(sets[0], (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(sets[1], (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(sets[2], (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
}

// The members' processes agree with the layouts of the CPU's groups (make_groups, the groups
// the collective kernels find through their membership), on a 2 x 3 mesh over 2 processes.
TEST(GpuMeshTest, GroupsAreTheCpuPlansGroups) {
  const MeshAxes mesh{{"gm_x", "gm_y"}, {2, 3}};
  const GpuMesh gpus = gpu_mesh("shard_map", 6, {3, 3});
  const auto members = group_members(mesh);
  std::vector<cpu::shard_plan::AxisSet> sets = cpu::shard_plan::make_groups(mesh, gpus.process);
  ASSERT_EQ(sets.size(), members.size());
  int spanning = 0;
  for (size_t s = 0; s < sets.size(); ++s) {
    ASSERT_EQ(sets[s].groups.size(), members[s].size());
    for (size_t g = 0; g < members[s].size(); ++g) {
      const distributed::GroupLayout* layout = sets[s].layouts[g].get();
      std::vector<int> procs;
      for (int k : members[s][g]) procs.push_back(gpus.process[k]);
      if (layout == nullptr) {  // one process holds the whole group
        for (int p : procs) EXPECT_EQ(p, procs[0]);
        continue;
      }
      ++spanning;
      EXPECT_EQ(layout->process, procs) << "set " << s << " group " << g;
    }
  }
  EXPECT_GT(spanning, 0);  // {x} and {x, y} span both processes
}

TEST(GpuMeshTest, NcclPlanPerProcess) {
  const GpuMesh gpus = gpu_mesh("shard_map", 4, {2, 2});
  // Members 0 (process 0, GPU 0) and 2 (process 1, GPU 0).
  NcclGroupPlan p0 = nccl_group_plan(gpus, {0, 2}, 0), p1 = nccl_group_plan(gpus, {0, 2}, 1);
  EXPECT_EQ(p0.size, 2);
  EXPECT_EQ(p0.procs, (std::vector<int>{0, 1}));
  EXPECT_EQ(p0.root, 0);
  EXPECT_EQ(p1.root, 0);
  EXPECT_EQ(p0.local_ranks, std::vector<int>{0});
  EXPECT_EQ(p1.local_ranks, std::vector<int>{1});
  EXPECT_EQ(p0.local_gpus, std::vector<int>{0});
  EXPECT_EQ(p1.local_gpus, std::vector<int>{0});
  EXPECT_EQ(p0.key, (Key{{0, 0}, {1, 0}}));
  EXPECT_EQ(p0.key, p1.key);  // every process names the group alike
  // A group on process 1 alone: process 0 makes no rank, process 1 makes both and the id.
  NcclGroupPlan q0 = nccl_group_plan(gpus, {2, 3}, 0), q1 = nccl_group_plan(gpus, {2, 3}, 1);
  EXPECT_TRUE(q0.local_ranks.empty());
  EXPECT_EQ(q1.procs, std::vector<int>{1});
  EXPECT_EQ(q1.root, 1);
  EXPECT_EQ(q1.local_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(q1.local_gpus, (std::vector<int>{0, 1}));
  // Rank order is the group's, not the members' numbering: rank 0 on process 1.
  NcclGroupPlan r0 = nccl_group_plan(gpus, {3, 1}, 0);
  EXPECT_EQ(r0.root, 1);
  EXPECT_EQ(r0.local_ranks, std::vector<int>{1});
  EXPECT_EQ(r0.key, (Key{{1, 1}, {0, 1}}));
}

// Two axis sets holding the same GPUs (an axis of size 1) share one communicator: same key.
TEST(GpuMeshTest, SameGpusSameKey) {
  const MeshAxes mesh{{"gm_p", "gm_q"}, {4, 1}};
  const GpuMesh gpus = gpu_mesh("shard_map", 4, {2, 2});
  const auto members = group_members(mesh);
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(nccl_group_plan(gpus, members[0][0], 0).key,
            nccl_group_plan(gpus, members[2][0], 0).key);
  EXPECT_NE(nccl_group_plan(gpus, members[0][0], 0).key,
            nccl_group_plan(gpus, members[1][0], 0).key);
}

}  // namespace
}  // namespace graft::cuda
