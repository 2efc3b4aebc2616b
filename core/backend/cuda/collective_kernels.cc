// CUDA kernels of the collectives (core/primitives/collective.h) inside a shard_map or pmap
// run on GPUs (shard_map_kernel.cc). They find their group exactly as the CPU's kernels do
// (distributed::membership: the groups of core/backend/cpu/shard_map_plan.h, one per set of
// mesh axes and coordinates on the others); the data moves through NCCL instead of shared
// memory or MPI. Each group gets one NCCL communicator, its ranks the group's ranks, made on
// first use and cached for the process's life, keyed by the group's GPUs ((process, GPU) per
// rank): so one per mesh axis (or set of axes) and slice of the mesh. The plan of how it is
// made (gpu_mesh.h: which process makes the ncclUniqueId, which ranks this process makes)
// is registered by the shard_map for its groups (nccl_groups.h). When the group spans
// processes the id goes to the others over MPI (core/distributed/mpi.h, the group's tag), as
// the CPU's collectives send their data. Every member thread drives its own GPU's rank.
//
// NCCL's layouts are rank-major blocks; graft's collectives gather / scatter along any
// dimension, so a block not already outermost is moved with the strided copy engine
// (kernels/strided.h) into call scratch first (or out of it after).
//
// Reductions of f16 / bf16 are NCCL's (the CPU accumulates in f32).
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backend/cpu/all_to_all_blocks.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/strided.h"
#include "core/backend/cuda/nccl_groups.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/nccl.h"
#include "core/distributed/in_process.h"
#include "core/distributed/mpi.h"
#include "core/error.h"
#include "core/primitives/collective.h"

namespace graft::cuda {
namespace {

using distributed::Membership;

// The shard_maps' group plans (nccl_groups.h), by in-process group.
std::mutex plans_mu;
std::map<const distributed::InProcessGroup*, NcclGroupPlan>& plans() {
  static auto* m = new std::map<const distributed::InProcessGroup*, NcclGroupPlan>();
  return *m;
}

NcclGroupPlan plan_of(const char* op, const distributed::InProcessGroup* g) {
  std::lock_guard<std::mutex> lock(plans_mu);
  auto it = plans().find(g);
  if (it == plans().end()) graft::fail(op, "no NCCL plan for this group (not in a GPU shard_map)");
  return it->second;
}

// The group this member is in for the collective's axes, checked against its size.
const Membership& member(const char* op, const Collective& p) {
  const Membership& me = distributed::membership(op, p.mask());
  if (me.size() != p.group_size()) {
    graft::fail(op, "the group has ", me.size(), " members, the collective expects ",
                p.group_size());
  }
  return me;
}

// Every group's communicators made so far: per key (gpu_mesh.h), this process's ranks, in the
// plan's local_ranks order. Map nodes never move; each rank is used by its member's thread.
std::mutex comms_mu;
std::map<std::vector<std::pair<int, int>>, std::vector<NcclCommunicator>>& comms() {
  static auto* m = new std::map<std::vector<std::pair<int, int>>, std::vector<NcclCommunicator>>();
  return *m;
}

NcclCommunicator* cached(const NcclGroupPlan& plan, int rank) {
  std::lock_guard<std::mutex> lock(comms_mu);
  auto it = comms().find(plan.key);
  if (it == comms().end()) return nullptr;
  for (size_t i = 0; i < plan.local_ranks.size(); ++i) {
    if (plan.local_ranks[i] == rank) return &it->second[i];
  }
  return nullptr;
}

// Makes this process's ranks of the group's communicator: the id from the root process (over
// MPI when the group spans processes), then every local rank in one NCCL group call.
void make_comms(const char* op, const Membership& me, const NcclGroupPlan& plan) {
  ncclUniqueId id{};
  const int self = process_index();
  if (self == plan.root) id = NcclCommunicator::unique_id();
  if (plan.procs.size() > 1) {
    if (me.layout == nullptr) graft::fail(op, "a group over several processes has no layout");
    std::vector<ncclUniqueId> got(plan.procs.size());
    std::vector<size_t> bytes(plan.procs.size(), sizeof(ncclUniqueId));
    std::vector<char*> out;
    for (ncclUniqueId& g : got) out.push_back(reinterpret_cast<char*>(&g));
    distributed::InProcessGroup* group = me.group;
    distributed::mpi::exchange(op, me.layout->tag, plan.procs, &id, bytes, out,
                               [group] { return group->aborted(); });
    const size_t root = std::lower_bound(plan.procs.begin(), plan.procs.end(), plan.root) -
                        plan.procs.begin();
    if (plan.procs[root] != self) std::memcpy(&id, &got[root], sizeof id);
  }
  std::vector<NcclCommunicator> made =
      NcclCommunicator::init_ranks(id, plan.size, plan.local_ranks, plan.local_gpus);
  std::lock_guard<std::mutex> lock(comms_mu);
  comms().emplace(plan.key, std::move(made));
}

// This member's rank of its group's communicator. Found in the cache, or made: the members of
// this process line up (a host barrier; every process's members reach the same collective,
// so all miss together), the first makes this process's ranks, and a second barrier hands
// them out. A failure aborts the group, so that no member waits for ever.
NcclCommunicator& communicator(const char* op, const Membership& me, int device) {
  const NcclGroupPlan plan = plan_of(op, me.group);
  if (NcclCommunicator* c = cached(plan, me.rank)) return *c;
  const int lr = me.local_rank();
  me.group->exchange(op, lr, nullptr);
  me.group->done(op);
  if (lr == 0 && cached(plan, me.rank) == nullptr) {
    try {
      make_comms(op, me, plan);
    } catch (const std::exception& e) {
      me.group->abort(std::string("GPU ") + std::to_string(device) + ": " + e.what());
      throw;
    }
  }
  me.group->exchange(op, lr, nullptr);
  me.group->done(op);
  NcclCommunicator* c = cached(plan, me.rank);
  if (c == nullptr) graft::fail(op, "no NCCL communicator for rank ", me.rank);
  return *c;
}

// NCCL has no bool: pmax / pmin of bool are u8 max / min of 0 and 1.
DType wire_dtype(DType d) { return d == DType::kBool ? DType::kU8 : d; }

int64_t prod(const Shape& s, size_t from, size_t to) {
  int64_t r = 1;
  for (size_t i = from; i < to; ++i) r *= s[i];
  return r;
}

void all_reduce_kernel(Call& c) {
  const auto& p = c.params<AllReduce>();
  const Membership& me = member(p.name().data(), p);
  NcclCommunicator& comm = communicator(p.name().data(), me, c.device());
  const auto count = static_cast<size_t>(numel(c.out_aval().shape));
  if (count == 0) return;
  const ReduceOp op = p.id() == PrimitiveId::kPsum   ? ReduceOp::kSum
                      : p.id() == PrimitiveId::kPmax ? ReduceOp::kMax
                                                     : ReduceOp::kMin;
  comm.all_reduce(c.in_raw(0), c.out_raw(), count, wire_dtype(c.out_aval().dtype), op, c.stream());
}

// NCCL gathers [n, outer, inner]; the output is [outer, n, inner] (the new or tiled axis at
// `dim`): gathered straight into the output when outer is 1, else through scratch.
void all_gather_kernel(Call& c) {
  const auto& p = c.params<AllGather>();
  const Membership& me = member("all_gather", p);
  NcclCommunicator& comm = communicator("all_gather", me, c.device());
  const Shape& s = c.in_aval(0).shape;
  const DType dt = c.in_aval(0).dtype;
  const int64_t n = me.size(), outer = prod(s, 0, p.dim()), inner = prod(s, p.dim(), s.size());
  const int64_t count = outer * inner, esize = static_cast<int64_t>(dtype_size(dt));
  if (count == 0) return;
  void* out = c.out_raw();
  void* recv = outer == 1 ? out : c.scratch(static_cast<size_t>(n * count * esize));
  comm.all_gather(c.in_raw(0), recv, static_cast<size_t>(count), wire_dtype(dt), c.stream());
  if (recv != out) {
    strided_copy(esize, {n, outer, inner}, recv, {outer * inner, inner, 1}, out,
                 {inner, n * inner, 1}, c.stream());
  }
}

// The input is [outer, n, inner] (block j of dimension dim goes to member j); NCCL wants the
// blocks outermost: moved to [n, outer, inner] in scratch first unless outer is 1.
void psum_scatter_kernel(Call& c) {
  const auto& p = c.params<PsumScatter>();
  const Membership& me = member("psum_scatter", p);
  NcclCommunicator& comm = communicator("psum_scatter", me, c.device());
  const Shape& s = c.in_aval(0).shape;
  const DType dt = c.in_aval(0).dtype;
  const int64_t n = me.size(), outer = prod(s, 0, p.dim());
  const int64_t inner = prod(s, p.dim() + 1, s.size()) * (p.tiled() ? s[p.dim()] / n : 1);
  const int64_t count = outer * inner, esize = static_cast<int64_t>(dtype_size(dt));
  if (count == 0) return;
  const void* send = c.in_raw(0);
  if (outer != 1) {
    void* t = c.scratch(static_cast<size_t>(n * count * esize));
    strided_copy(esize, {n, outer, inner}, send, {inner, n * inner, 1}, t,
                 {outer * inner, inner, 1}, c.stream());
    send = t;
  }
  comm.reduce_scatter(send, c.out_raw(), static_cast<size_t>(count), wire_dtype(dt), ReduceOp::kSum,
                      c.stream());
}

// The blocks as the CPU's kernel moves them (cpu/all_to_all_blocks.h). Block p of the input is
// packed into send slot p, NCCL delivers member q's slot r as receive slot q, which is unpacked
// into block q of the output.
void all_to_all_kernel(Call& c) {
  const auto& p = c.params<AllToAll>();
  const Membership& me = member("all_to_all", p);
  NcclCommunicator& comm = communicator("all_to_all", me, c.device());
  const DType dt = c.in_aval(0).dtype;
  const auto esize = static_cast<int64_t>(dtype_size(dt));
  const int n = me.size();
  const cpu::AllToAllBlocks b =
      cpu::all_to_all_blocks(p, n, c.in_aval(0).shape, c.out_aval().shape);
  const int64_t bn = numel(b.block);
  if (bn == 0) return;
  const Shape dense = row_major_strides(b.block);
  auto* send = static_cast<char*>(c.scratch(static_cast<size_t>(2 * n * bn * esize)));
  char* recv = send + n * bn * esize;
  const auto* in = static_cast<const char*>(c.in_raw(0));
  auto* out = static_cast<char*>(c.out_raw());
  for (int q = 0; q < n; ++q) {
    strided_copy(esize, b.block, in + q * b.src_step * esize, b.src_strides, send + q * bn * esize,
                 dense, c.stream());
  }
  comm.all_to_all(send, recv, static_cast<size_t>(bn), wire_dtype(dt), c.stream());
  for (int q = 0; q < n; ++q) {
    strided_copy(esize, b.block, recv + q * bn * esize, dense, out + q * b.dst_step * esize,
                 b.dst_strides, c.stream());
  }
}

void ppermute_kernel(Call& c) {
  const auto& p = c.params<Ppermute>();
  const Membership& me = member("ppermute", p);
  NcclCommunicator& comm = communicator("ppermute", me, c.device());
  const auto count = static_cast<size_t>(numel(c.out_aval().shape));
  if (count == 0) return;
  comm.ppermute(c.in_raw(0), c.out_raw(), count, wire_dtype(c.out_aval().dtype), p.perm(),
                c.stream());
}

void axis_index_kernel(Call& c) {
  const auto& p = c.params<AxisIndex>();
  const int32_t rank = distributed::membership("axis_index", p.mask()).rank;
  // From pageable memory: returns once `rank` has been staged, so the local may go.
  check(cudaMemcpyAsync(c.out_raw(), &rank, sizeof rank, cudaMemcpyHostToDevice, c.stream()),
        "cudaMemcpyAsync (axis_index)");
}

void identity_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

GroupPlansScope::GroupPlansScope(std::vector<const distributed::InProcessGroup*> groups,
                                 std::vector<NcclGroupPlan> plans_)
    : groups_(std::move(groups)) {
  std::lock_guard<std::mutex> lock(plans_mu);
  for (size_t i = 0; i < groups_.size(); ++i) plans()[groups_[i]] = std::move(plans_[i]);
}

GroupPlansScope::~GroupPlansScope() {
  std::lock_guard<std::mutex> lock(plans_mu);
  for (const distributed::InProcessGroup* g : groups_) plans().erase(g);
}

void register_shard_map_kernel(KernelTable& table);  // shard_map_kernel.cc

void register_collective_kernels(KernelTable& table) {
  for (PrimitiveId id : {PrimitiveId::kPsum, PrimitiveId::kPmax, PrimitiveId::kPmin}) {
    table[static_cast<int>(id)] = &all_reduce_kernel;
  }
  table[static_cast<int>(PrimitiveId::kAllGather)] = &all_gather_kernel;
  table[static_cast<int>(PrimitiveId::kPsumScatter)] = &psum_scatter_kernel;
  table[static_cast<int>(PrimitiveId::kAllToAll)] = &all_to_all_kernel;
  table[static_cast<int>(PrimitiveId::kPpermute)] = &ppermute_kernel;
  table[static_cast<int>(PrimitiveId::kAxisIndex)] = &axis_index_kernel;
  table[static_cast<int>(PrimitiveId::kPvary)] = &identity_kernel;
  table[static_cast<int>(PrimitiveId::kShardingConstraint)] = &identity_kernel;
  register_shard_map_kernel(table);
}

}  // namespace graft::cuda
