// CPU kernel of shard_map (and so of pmap): runs the body as device k of the mesh on virtual
// device k's stream (device_streams.h), all devices at once. Each device cuts its own block
// out of every split input and writes its block of every output (disjoint regions of the
// outputs, allocated before the devices start). Collectives meet in in-process groups, one
// per set of mesh axes and combination of coordinates on the other axes.
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "core/backend/cpu/device_streams.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/run_body.h"
#include "core/backend/cpu/strided_copy.h"
#include "core/distributed/in_process.h"
#include "core/error.h"
#include "core/primitives/shard_map.h"

namespace graft::cpu {
namespace {

constexpr int kMaxMeshAxes = 6;  // groups for every subset of the axes: 2^6 - 1 sets at most

// Row-major linearization of coordinates `c` over the mesh axes `axes`.
int64_t linear(const std::vector<int64_t>& c, const MeshAxes& mesh, const std::vector<int>& axes) {
  int64_t r = 0;
  for (int a : axes) r = r * mesh.sizes[a] + c[a];
  return r;
}

// Where device `c`'s block of an array of shape `full` sits: the block's shape and the
// element offset of its first element.
struct Block {
  Shape shape;
  int64_t offset = 0;
};

Block block_at(const Shape& full, const DimAxes& spec, const MeshAxes& mesh,
               const std::vector<int64_t>& c) {
  Block b{full, 0};
  Shape strides = row_major_strides(full);
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t n = 1;
    for (int a : spec[d]) n *= mesh.sizes[a];
    b.shape[d] = full[d] / n;
    b.offset += linear(c, mesh, spec[d]) * b.shape[d] * strides[d];
  }
  return b;
}

bool split(const DimAxes& spec) {
  for (const auto& axes : spec) {
    if (!axes.empty()) return true;
  }
  return false;
}

// Whether the spec names mesh axis a.
bool names(const DimAxes& spec, int a) {
  for (const auto& axes : spec) {
    for (int x : axes) {
      if (x == a) return true;
    }
  }
  return false;
}

// The groups of one set of mesh axes (a bit mask over mesh axis indices).
struct AxisSet {
  AxisMask axes = 0;         // global axis bits (core/axis.h)
  std::vector<int> in, out;  // mesh axes in the set, and the others
  std::vector<std::unique_ptr<distributed::InProcessGroup>> groups;
};

void shard_map_kernel(Call& c) {
  const auto& p = c.params<ShardMap>();
  const MeshAxes& mesh = p.mesh();
  const int k = static_cast<int>(mesh.names.size());
  if (k > kMaxMeshAxes) fail(p.name(), "at most ", kMaxMeshAxes, " mesh axes, got ", k);
  const int n = static_cast<int>(mesh.size());
  std::vector<AxisSet> sets;
  for (int m = 1; m < (1 << k); ++m) {
    AxisSet s;
    int64_t size = 1;
    for (int a = 0; a < k; ++a) {
      if (m >> a & 1) {
        s.in.push_back(a);
        s.axes |= AxisMask{1} << axis_bit(mesh.names[a]);
        size *= mesh.sizes[a];
      } else {
        s.out.push_back(a);
      }
    }
    for (int64_t g = 0; g < n / size; ++g) {
      s.groups.push_back(std::make_unique<distributed::InProcessGroup>(static_cast<int>(size)));
    }
    sets.push_back(std::move(s));
  }
  // Outputs are allocated here, on the calling thread; devices write their blocks.
  std::vector<char*> out(static_cast<size_t>(c.num_outputs()));
  for (int o = 0; o < c.num_outputs(); ++o) out[o] = static_cast<char*>(c.out_raw(o));
  std::vector<Buffers> results(static_cast<size_t>(n));
  auto abort_all = [&](const std::string& why) {
    for (AxisSet& s : sets) {
      for (auto& g : s.groups) g->abort(why);
    }
  };
  run_on_devices(n, [&](int dev) {
    std::vector<int64_t> coord(static_cast<size_t>(k));
    for (int a = k, r = dev; a-- > 0;) {
      coord[a] = r % mesh.sizes[a];
      r /= static_cast<int>(mesh.sizes[a]);
    }
    std::vector<std::unique_ptr<distributed::MemberScope>> member;
    for (AxisSet& s : sets) {
      member.push_back(std::make_unique<distributed::MemberScope>(
          s.axes, s.groups[linear(coord, mesh, s.out)].get(),
          static_cast<int>(linear(coord, mesh, s.in))));
    }
    try {
      Buffers ins;
      for (int i = 0; i < c.num_inputs(); ++i) {
        const DimAxes& spec = p.in_specs()[i];
        if (!split(spec)) {
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
        // Replicated over an axis the spec does not name: the devices at coordinate 0 write.
        bool writes = true;
        for (int a = 0; a < k; ++a) writes = writes && (names(spec, a) || coord[a] == 0);
        const Aval& av = c.out_aval(o);
        Block b = block_at(av.shape, spec, mesh, coord);
        if (!writes || numel(b.shape) == 0) continue;
        const auto esize = static_cast<int64_t>(dtype_size(av.dtype));
        strided_copy(esize, b.shape, outs[o]->data(), row_major_strides(b.shape),
                     out[o] + b.offset * esize, row_major_strides(av.shape));
      }
    } catch (const std::exception& e) {
      abort_all("device " + std::to_string(dev) + ": " + e.what());
      throw;
    } catch (...) {
      abort_all("device " + std::to_string(dev) + " failed");
      throw;
    }
  });
}

}  // namespace

void register_shard_map_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kShardMap)] = &shard_map_kernel;
}

}  // namespace graft::cpu
