// CPU kernel of shard_map (and so of pmap): runs the body as device k of the mesh on virtual
// device k's stream (device_streams.h), all devices at once. Each device cuts its own block
// out of every split input and writes its block of every output (disjoint regions of the
// outputs, allocated before the devices start). Collectives meet in in-process groups, one
// per set of mesh axes and combination of coordinates on the other axes. In a multi-process
// run (core/distributed/mpi.h) each process runs the members on its own devices, groups that
// span processes exchange over MPI, and the output blocks computed elsewhere are fetched
// after the body (write_back); first of all, the processes check that they run the same
// shard_map on the same avals (core/distributed/program_agreement.h).
#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "core/backend/cpu/device_streams.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/run_body.h"
#include "core/backend/cpu/shard_map_plan.h"
#include "core/backend/cpu/strided_copy.h"
#include "core/device/device.h"
#include "core/distributed/in_process.h"
#include "core/distributed/mpi.h"
#include "core/distributed/program_agreement.h"
#include "core/error.h"
#include "core/primitives/shard_map.h"

namespace graft::cpu {
namespace {

using shard_plan::AxisSet;
using shard_plan::Block;
using shard_plan::block_at;
using shard_plan::coords;
using shard_plan::linear;
using shard_plan::named_axes;

// Shard_maps of a multi-process run go one at a time, so that every process sends their
// messages in the same order (the tags name groups, not calls).
std::mutex multi_process_mu;

void shard_map_kernel(Call& c) {
  const auto& p = c.params<ShardMap>();
  const MeshAxes& mesh = p.mesh();
  shard_plan::check_mesh(p, device_count(), "");
  const int n = static_cast<int>(mesh.size());
  // The mesh is the first n devices; this process runs the members on its own.
  std::vector<int> process_of(static_cast<size_t>(n)), members, streams;
  const int first_local = local_devices().front().id;
  for (int dev = 0; dev < n; ++dev) {
    process_of[dev] = devices()[dev].process_index;
    if (process_of[dev] == process_index()) {
      members.push_back(dev);
      streams.push_back(dev - first_local);
    }
  }
  const bool multi = process_count() > 1;
  std::unique_lock<std::mutex> one_at_a_time(multi_process_mu, std::defer_lock);
  if (multi) {
    one_at_a_time.lock();
    std::vector<Aval> in;
    for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.in_aval(i));
    distributed::check_processes_agree(p, in);  // before anything is exchanged
  }
  std::vector<AxisSet> sets = shard_plan::make_groups(mesh, process_of);
  // Outputs are allocated here, on the calling thread; devices write their blocks.
  std::vector<char*> out(static_cast<size_t>(c.num_outputs()));
  for (int o = 0; o < c.num_outputs(); ++o) out[o] = static_cast<char*>(c.out_raw(o));
  const std::vector<std::vector<bool>> writes = shard_plan::first_writers(p, members);
  run_on_devices(streams, [&](int member) {
    const int dev = members[member];
    const std::vector<int64_t> coord = coords(dev, mesh);
    const auto scopes = shard_plan::join_groups(sets, mesh, dev);
    try {
      Buffers ins;
      for (int i = 0; i < c.num_inputs(); ++i) {
        const DimAxes& spec = p.in_specs()[i];
        if (!shard_plan::split(spec)) {
          ins.push_back(c.in_buffer(i));
          continue;
        }
        const Aval& a = c.in_aval(i);
        const auto esize = static_cast<int64_t>(dtype_size(a.dtype));
        Block b = block_at(a.shape, spec, mesh, coord);
        auto buf = Buffer::make(static_cast<size_t>(numel(b.shape) * esize));
        if (numel(b.shape) > 0) {
          strided_copy(esize, b.shape, static_cast<const char*>(c.in_raw(i)) + b.offset * esize,
                       row_major_strides(a.shape), buf->data(), row_major_strides(b.shape));
        }
        ins.push_back(std::move(buf));
      }
      Buffers outs = run_body(p, 0, std::move(ins));
      for (int o = 0; o < c.num_outputs(); ++o) {
        const DimAxes& spec = p.out_specs()[o];
        const Aval& av = c.out_aval(o);
        Block b = block_at(av.shape, spec, mesh, coord);
        if (!writes[o][member] || numel(b.shape) == 0) continue;
        const auto esize = static_cast<int64_t>(dtype_size(av.dtype));
        strided_copy(esize, b.shape, outs[o]->data(), row_major_strides(b.shape),
                     out[o] + b.offset * esize, row_major_strides(av.shape));
      }
    } catch (const std::exception& e) {
      shard_plan::abort_groups(sets, "device " + std::to_string(dev) + ": " + e.what());
      throw;
    } catch (...) {
      shard_plan::abort_groups(sets, "device " + std::to_string(dev) + " failed");
      throw;
    }
  });
  if (multi) {
    std::vector<Aval> avals;
    for (int o = 0; o < c.num_outputs(); ++o) avals.push_back(c.out_aval(o));
    shard_plan::write_back(p, process_of, avals, out);
  }
}

}  // namespace

void register_shard_map_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kShardMap)] = &shard_map_kernel;
}

}  // namespace graft::cpu
