// CUDA kernel of shard_map (and so of pmap) on a mesh of GPUs: member k runs the body on GPU
// k of the run (the mesh is the first mesh-size GPUs, as the CPU's mesh is the first devices;
// with several processes, gpu_mesh.h numbers their GPUs in process order and each process
// runs the members on its own GPUs, as the CPU's kernel does with its virtual devices). What it
// shares with the CPU's kernel (core/backend/cpu/shard_map_kernel.cc) is the whole plan
// (core/backend/cpu/shard_map_plan.h: the blocks each member reads and writes, which member
// writes a block held by several, and the per-axis-set groups the collective kernels meet
// in) and the execution seam (cpu::run_on_devices: one host thread per device, here from the
// GPU pool, each member joined to its groups); what differs is where the blocks live.
//
// The call runs on GPU d (its operands' GPU). Before the members start, each member's block
// of every split input is cut out on d's stream (strided copy into a dense buffer) and that
// stream is waited for; member k then copies its blocks to GPU k (peer copies on k's stream,
// none when k is d), runs the body there (execute.h's run_body_on), copies each block it
// writes back to GPU d and waits for its stream. Then the blocks are placed into the outputs
// on d's stream. The collectives' NCCL communicators are planned here, per group
// (nccl_groups.h). In a multi-process run every process holds the whole of each operand
// (SPMD, as on the CPU) and ends with the whole of each output: the outputs come to the host,
// the blocks computed on other processes arrive over MPI (shard_plan::write_back, the CPU's),
// and they go back to GPU d.
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend/cpu/device_streams.h"
#include "core/backend/cpu/shard_map_plan.h"
#include "core/backend/cuda/device.h"
#include "core/backend/cuda/execute.h"
#include "core/backend/cuda/gpu_mesh.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/strided.h"
#include "core/backend/cuda/nccl_groups.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/distributed/program_agreement.h"
#include "core/error.h"
#include "core/primitives/shard_map.h"

namespace graft::cuda {
namespace {

namespace plan = cpu::shard_plan;

size_t bytes_of(const Shape& s, DType dt) { return static_cast<size_t>(numel(s)) * dtype_size(dt); }

// Copies `bytes` from GPU `from` to GPU `to` on `stream` (a device-to-device copy when they
// are the same GPU).
void copy_between(void* dst, int to, const void* src, int from, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  check(to == from ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)
                   : cudaMemcpyPeerAsync(dst, to, src, from, bytes, stream),
        "cudaMemcpyPeerAsync (shard_map)");
}

// Each process's GPU count, by process (gathered over MPI once, on the first shard_map over
// GPUs of a multi-process run: every process runs it, SPMD).
const std::vector<int>& gpus_per_process() {
  static const std::vector<int> counts = [] {
    const int procs = process_count(), me = process_index();
    std::vector<int> n(static_cast<size_t>(procs), 0);
    n[me] = device_count();
    if (procs == 1) return n;
    std::vector<int> all(static_cast<size_t>(procs));
    std::vector<char*> out;
    for (int j = 0; j < procs; ++j) {
      all[j] = j;
      out.push_back(reinterpret_cast<char*>(&n[j]));
    }
    distributed::mpi::exchange("shard_map", /*tag=*/0, all, &n[me],
                               std::vector<size_t>(static_cast<size_t>(procs), sizeof(int)), out);
    return n;
  }();
  return counts;
}

// Shard_maps of a multi-process run go one at a time, so that every process sends its
// messages in the same order (the tags name groups, not calls), as on the CPU.
std::mutex multi_process_mu;

// The NCCL plans of the groups with members here, registered for the call.
std::unique_ptr<GroupPlansScope> plan_groups(const MeshAxes& mesh, const GpuMesh& gpus,
                                             const std::vector<plan::AxisSet>& sets) {
  const int me = process_index();
  std::vector<const distributed::InProcessGroup*> groups;
  std::vector<NcclGroupPlan> plans;
  const std::vector<std::vector<std::vector<int>>> members = group_members(mesh);
  for (size_t s = 0; s < sets.size(); ++s) {
    for (size_t g = 0; g < sets[s].groups.size(); ++g) {
      NcclGroupPlan plan = nccl_group_plan(gpus, members[s][g], me);
      if (plan.local_ranks.empty()) continue;
      groups.push_back(sets[s].groups[g].get());
      plans.push_back(std::move(plan));
    }
  }
  return std::make_unique<GroupPlansScope>(std::move(groups), std::move(plans));
}

// Multi-process: the blocks of the outputs computed on other processes, fetched over MPI into
// a host copy of each output and put back on the home GPU.
void fetch_remote_blocks(Call& c, const ShardMap& p, const GpuMesh& gpus) {
  cudaStream_t stream = c.stream();
  std::vector<Aval> avals;
  std::vector<std::unique_ptr<char[]>> host;
  std::vector<char*> outs;
  for (int o = 0; o < c.num_outputs(); ++o) {
    avals.push_back(c.out_aval(o));
    const size_t bytes = bytes_of(avals[o].shape, avals[o].dtype);
    host.emplace_back(new char[bytes + 1]);
    outs.push_back(host.back().get());
    if (bytes > 0)
      check(cudaMemcpyAsync(outs[o], c.out_raw(o), bytes, cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (shard_map outputs)");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (shard_map outputs)");
  plan::write_back(p, gpus.process, avals, outs);
  for (int o = 0; o < c.num_outputs(); ++o) {
    const size_t bytes = bytes_of(avals[o].shape, avals[o].dtype);
    if (bytes > 0)
      check(cudaMemcpyAsync(c.out_raw(o), outs[o], bytes, cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync (shard_map outputs)");
  }
  // The host copies go at return: wait until they have been read.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (shard_map outputs)");
}

void shard_map_kernel(Call& c) {
  const auto& p = c.params<ShardMap>();
  const MeshAxes& mesh = p.mesh();
  const bool multi = process_count() > 1;
  std::unique_lock<std::mutex> one_at_a_time(multi_process_mu, std::defer_lock);
  if (multi) {
    one_at_a_time.lock();
    std::vector<Aval> in;
    for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.in_aval(i));
    distributed::check_processes_agree(p, in);  // before anything is exchanged
  }
  int all_gpus = 0;
  for (int count : gpus_per_process()) all_gpus += count;
  plan::check_mesh(p, all_gpus, "CUDA ");
  const GpuMesh gpus = gpu_mesh(p.name().data(), mesh.size(), gpus_per_process());
  const int home = c.device();
  cudaStream_t home_stream = c.stream();
  // This process's members (mesh indices) and their GPUs.
  const std::vector<int> members = gpus.members_on(process_index());
  std::vector<int> local_gpus;
  for (int k : members) local_gpus.push_back(gpus.gpu[k]);
  const int here = static_cast<int>(members.size());
  std::vector<plan::AxisSet> sets = plan::make_groups(mesh, gpus.process);
  const std::unique_ptr<GroupPlansScope> nccl_plans = plan_groups(mesh, gpus, sets);
  const std::vector<std::vector<bool>> writes = plan::first_writers(p, members);

  // ins[j][i]: member members[j]'s block of input i on the home GPU (the input itself when
  // unsplit).
  std::vector<Buffers> ins(static_cast<size_t>(here));
  for (int j = 0; j < here; ++j) {
    const std::vector<int64_t> coord = plan::coords(members[j], mesh);
    for (int i = 0; i < c.num_inputs(); ++i) {
      const DimAxes& spec = p.in_specs()[i];
      if (!plan::split(spec)) {
        ins[j].push_back(c.in_buffer(i));
        continue;
      }
      const Aval& a = c.in_aval(i);
      const auto esize = static_cast<int64_t>(dtype_size(a.dtype));
      const plan::Block b = plan::block_at(a.shape, spec, mesh, coord);
      std::shared_ptr<Buffer> buf =
          allocate_buffer(home, bytes_of(b.shape, a.dtype), "shard_map block");
      if (numel(b.shape) > 0) {
        strided_copy(esize, b.shape, static_cast<const char*>(c.in_raw(i)) + b.offset * esize,
                     row_major_strides(a.shape), buf->data(), row_major_strides(b.shape),
                     home_stream);
      }
      ins[j].push_back(std::move(buf));
    }
  }
  check(cudaStreamSynchronize(home_stream), "cudaStreamSynchronize (shard_map)");

  // outs[j][o]: the block member members[j] writes of output o, on the home GPU (null if it
  // writes none).
  std::vector<Buffers> outs(static_cast<size_t>(here), Buffers(c.num_outputs()));
  cpu::run_on_devices(
      local_gpus,
      [&](int j) {
        const int k = local_gpus[j];  // the member's GPU
        DeviceGuard guard(k);
        cudaStream_t stream = compute_stream(k);
        const auto scopes = plan::join_groups(sets, mesh, members[j]);
        try {
          Buffers local;
          for (int i = 0; i < c.num_inputs(); ++i) {
            const std::shared_ptr<Buffer>& b = ins[j][i];
            if (k == home) {
              local.push_back(b);
              continue;
            }
            std::shared_ptr<Buffer> copy = allocate_buffer(k, b->bytes(), "shard_map block");
            copy_between(copy->data(), k, b->data(), home, b->bytes(), stream);
            local.push_back(std::move(copy));
          }
          Buffers results = run_body_on(k, p, 0, std::move(local));
          for (int o = 0; o < c.num_outputs(); ++o) {
            if (!writes[o][j]) continue;
            // A body output that is one of its constants is host memory.
            if (results[o]->on_host()) results[o] = upload(k, *results[o]);
            if (k == home) {
              outs[j][o] = std::move(results[o]);
              continue;
            }
            const size_t bytes = results[o]->bytes();
            outs[j][o] = allocate_buffer(home, bytes, "shard_map block");
            copy_between(outs[j][o]->data(), home, results[o]->data(), k, bytes, stream);
          }
          // The home GPU reads the blocks after this, and ins[j] may go.
          check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (shard_map member)");
        } catch (const std::exception& e) {
          plan::abort_groups(sets, "GPU " + std::to_string(k) + ": " + e.what());
          throw;
        } catch (...) {
          plan::abort_groups(sets, "GPU " + std::to_string(k) + " failed");
          throw;
        }
      },
      cpu::StreamPool::kGpu);

  for (int o = 0; o < c.num_outputs(); ++o) {
    const Aval& av = c.out_aval(o);
    const auto esize = static_cast<int64_t>(dtype_size(av.dtype));
    auto* out = static_cast<char*>(c.out_raw(o));
    for (int j = 0; j < here; ++j) {
      const plan::Block b =
          plan::block_at(av.shape, p.out_specs()[o], mesh, plan::coords(members[j], mesh));
      if (!outs[j][o] || numel(b.shape) == 0) continue;
      strided_copy(esize, b.shape, outs[j][o]->data(), row_major_strides(b.shape),
                   out + b.offset * esize, row_major_strides(av.shape), home_stream);
    }
  }
  if (multi) fetch_remote_blocks(c, p, gpus);
}

}  // namespace

void register_shard_map_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kShardMap)] = &shard_map_kernel;
}

}  // namespace graft::cuda
