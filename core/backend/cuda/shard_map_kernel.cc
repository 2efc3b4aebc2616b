// CUDA kernel of shard_map (and so of pmap) on a mesh of GPUs: member k runs the body on GPU
// k (the mesh is the first mesh-size GPUs, as the CPU's mesh is the first devices). What it
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
// on d's stream. Single process only: a mesh of several processes' GPUs is refused.
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/cpu/device_streams.h"
#include "core/backend/cpu/shard_map_plan.h"
#include "core/backend/cuda/device.h"
#include "core/backend/cuda/execute.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/strided.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/device.h"
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

void shard_map_kernel(Call& c) {
  const auto& p = c.params<ShardMap>();
  const MeshAxes& mesh = p.mesh();
  if (process_count() > 1) {
    graft::fail(p.name(), "a mesh of GPUs over several processes is not supported yet");
  }
  plan::check_mesh(p, device_count(), "CUDA ");
  const int n = static_cast<int>(mesh.size());
  const int home = c.device();
  cudaStream_t home_stream = c.stream();
  std::vector<int> members(static_cast<size_t>(n)), process_of(static_cast<size_t>(n), 0);
  for (int k = 0; k < n; ++k) members[k] = k;
  std::vector<plan::AxisSet> sets = plan::make_groups(mesh, process_of);
  const std::vector<std::vector<bool>> writes = plan::first_writers(p, members);

  // ins[k][i]: member k's block of input i on the home GPU (the input itself when unsplit).
  std::vector<Buffers> ins(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    const std::vector<int64_t> coord = plan::coords(k, mesh);
    for (int i = 0; i < c.num_inputs(); ++i) {
      const DimAxes& spec = p.in_specs()[i];
      if (!plan::split(spec)) {
        ins[k].push_back(c.in_buffer(i));
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
      ins[k].push_back(std::move(buf));
    }
  }
  check(cudaStreamSynchronize(home_stream), "cudaStreamSynchronize (shard_map)");

  // outs[k][o]: the block member k writes of output o, on the home GPU (null if it writes none).
  std::vector<Buffers> outs(static_cast<size_t>(n), Buffers(c.num_outputs()));
  cpu::run_on_devices(
      members,
      [&](int k) {
        DeviceGuard guard(k);
        cudaStream_t stream = compute_stream(k);
        const auto scopes = plan::join_groups(sets, mesh, k);
        try {
          Buffers local;
          for (int i = 0; i < c.num_inputs(); ++i) {
            const std::shared_ptr<Buffer>& b = ins[k][i];
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
            if (!writes[o][k]) continue;
            // A body output that is one of its constants is host memory.
            if (results[o]->on_host()) results[o] = upload(k, *results[o]);
            if (k == home) {
              outs[k][o] = std::move(results[o]);
              continue;
            }
            const size_t bytes = results[o]->bytes();
            outs[k][o] = allocate_buffer(home, bytes, "shard_map block");
            copy_between(outs[k][o]->data(), home, results[o]->data(), k, bytes, stream);
          }
          // The home GPU reads the blocks after this, and ins[k] may go.
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
    for (int k = 0; k < n; ++k) {
      const plan::Block b = plan::block_at(av.shape, p.out_specs()[o], mesh, plan::coords(k, mesh));
      if (!outs[k][o] || numel(b.shape) == 0) continue;
      strided_copy(esize, b.shape, outs[k][o]->data(), row_major_strides(b.shape),
                   out + b.offset * esize, row_major_strides(av.shape), home_stream);
    }
  }
}

}  // namespace

void register_shard_map_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kShardMap)] = &shard_map_kernel;
}

}  // namespace graft::cuda
