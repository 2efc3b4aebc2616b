#include "core/backend/cpu/shard_map_plan.h"

#include <algorithm>
#include <memory>

#include "core/backend/cpu/strided_copy.h"
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/error.h"

namespace graft::cpu::shard_plan {
namespace {

// Whether the spec names mesh axis a.
bool names(const DimAxes& spec, int a) {
  for (const auto& axes : spec) {
    for (int x : axes) {
      if (x == a) return true;
    }
  }
  return false;
}

}  // namespace

// Row-major linearization of coordinates `c` over the mesh axes `axes`.
int64_t linear(const std::vector<int64_t>& c, const MeshAxes& mesh, const std::vector<int>& axes) {
  int64_t r = 0;
  for (int a : axes) r = r * mesh.sizes[a] + c[a];
  return r;
}

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

std::vector<int64_t> coords(int64_t dev, const MeshAxes& mesh) {
  const int k = static_cast<int>(mesh.names.size());
  std::vector<int64_t> c(static_cast<size_t>(k));
  for (int a = k; a-- > 0;) {
    c[a] = dev % mesh.sizes[a];
    dev /= mesh.sizes[a];
  }
  return c;
}

// The mesh axes a spec names: the coordinates on them say which block a device holds.
std::vector<int> named_axes(const DimAxes& spec, int k) {
  std::vector<int> out;
  for (int a = 0; a < k; ++a) {
    if (names(spec, a)) out.push_back(a);
  }
  return out;
}

// The groups of every set of mesh axes, with the layouts of those spanning processes.
std::vector<AxisSet> make_groups(const MeshAxes& mesh, const std::vector<int>& process_of) {
  const int k = static_cast<int>(mesh.names.size());
  const int n = static_cast<int>(mesh.size());
  const int me = process_index();
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
    const int64_t count = n / size;
    std::vector<distributed::GroupLayout> layout(static_cast<size_t>(count));
    for (auto& g : layout) {
      g.process.assign(static_cast<size_t>(size), 0);
      g.local.assign(static_cast<size_t>(size), -1);
    }
    for (int dev = 0; dev < n; ++dev) {
      const std::vector<int64_t> c = coords(dev, mesh);
      layout[linear(c, mesh, s.out)].process[linear(c, mesh, s.in)] = process_of[dev];
    }
    for (int64_t g = 0; g < count; ++g) {
      distributed::GroupLayout& l = layout[g];
      for (int r = 0; r < size; ++r) {
        if (l.process[r] == me) {
          l.local[r] = static_cast<int>(l.here.size());
          l.here.push_back(r);
        }
        if (std::find(l.procs.begin(), l.procs.end(), l.process[r]) == l.procs.end()) {
          l.procs.push_back(l.process[r]);
        }
      }
      std::sort(l.procs.begin(), l.procs.end());
      const size_t np = l.procs.size();
      l.count_of.assign(np, 0);
      l.first_of.assign(np, 0);
      for (int r = 0; r < size; ++r) {
        const size_t j = std::find(l.procs.begin(), l.procs.end(), l.process[r]) - l.procs.begin();
        l.slot.push_back(l.count_of[j]++);  // within its process for now
      }
      for (size_t j = 1; j < np; ++j) l.first_of[j] = l.first_of[j - 1] + l.count_of[j - 1];
      for (int r = 0; r < size; ++r) {
        const size_t j = std::find(l.procs.begin(), l.procs.end(), l.process[r]) - l.procs.begin();
        l.slot[r] += l.first_of[j];
      }
      l.self = static_cast<int>(std::find(l.procs.begin(), l.procs.end(), me) - l.procs.begin());
      l.tag = 1 + static_cast<int>(sets.size()) * n + static_cast<int>(g);  // 0: write_back
      s.groups.push_back(std::make_unique<distributed::InProcessGroup>(
          std::max<int>(1, static_cast<int>(l.here.size()))));
      s.layouts.push_back(
          l.procs.size() > 1 ? std::make_unique<distributed::GroupLayout>(std::move(l)) : nullptr);
    }
    sets.push_back(std::move(s));
  }
  return sets;
}

std::vector<std::unique_ptr<distributed::MemberScope>> join_groups(std::vector<AxisSet>& sets,
                                                                   const MeshAxes& mesh,
                                                                   int64_t dev) {
  const std::vector<int64_t> coord = coords(dev, mesh);
  std::vector<std::unique_ptr<distributed::MemberScope>> scopes;
  for (AxisSet& s : sets) {
    const int64_t g = linear(coord, mesh, s.out);
    scopes.push_back(std::make_unique<distributed::MemberScope>(
        s.axes, s.groups[g].get(), static_cast<int>(linear(coord, mesh, s.in)),
        s.layouts[g].get()));
  }
  return scopes;
}

void abort_groups(std::vector<AxisSet>& sets, const std::string& why) {
  for (AxisSet& s : sets) {
    for (auto& g : s.groups) g->abort(why);
  }
}

std::vector<std::vector<bool>> first_writers(const ShardMap& p, const std::vector<int>& members) {
  const MeshAxes& mesh = p.mesh();
  const int k = static_cast<int>(mesh.names.size());
  const auto n = static_cast<size_t>(mesh.size());
  std::vector<std::vector<bool>> writes(p.out_specs().size());
  for (size_t o = 0; o < writes.size(); ++o) {
    const std::vector<int> named = named_axes(p.out_specs()[o], k);
    std::vector<bool> taken(n, false);
    for (int dev : members) {
      const int64_t key = linear(coords(dev, mesh), mesh, named);
      writes[o].push_back(!taken[key]);
      taken[key] = true;
    }
  }
  return writes;
}

void write_back(const ShardMap& p, const std::vector<int>& process_of,
                const std::vector<Aval>& avals, const std::vector<char*>& outs) {
  const MeshAxes& mesh = p.mesh();
  const int k = static_cast<int>(mesh.names.size());
  const int n = static_cast<int>(mesh.size());
  const int procs = process_count(), me = process_index();
  struct Piece {
    int o;
    Block block;
    int from;
    bool here;  // a device of this process holds it
  };
  std::vector<Piece> pieces;
  for (int o = 0; o < static_cast<int>(avals.size()); ++o) {
    const DimAxes& spec = p.out_specs()[o];
    const std::vector<int> named = named_axes(spec, k);
    std::vector<int> first(static_cast<size_t>(n), -1);  // per block key: its first device
    std::vector<bool> here(static_cast<size_t>(n), false);
    for (int dev = 0; dev < n; ++dev) {
      const int64_t key = linear(coords(dev, mesh), mesh, named);
      if (first[key] < 0) first[key] = dev;
      if (process_of[dev] == me) here[key] = true;
    }
    for (int64_t key = 0; key < n; ++key) {
      if (first[key] < 0) continue;
      Block b = block_at(avals[o].shape, spec, mesh, coords(first[key], mesh));
      pieces.push_back(Piece{o, std::move(b), process_of[first[key]], here[key]});
    }
  }
  std::vector<size_t> bytes(static_cast<size_t>(procs), 0);
  auto size_of = [&](const Piece& q) {
    return static_cast<size_t>(numel(q.block.shape) * dtype_size(avals[q.o].dtype));
  };
  for (const Piece& q : pieces) bytes[q.from] += size_of(q);
  std::vector<std::unique_ptr<char[]>> blobs(static_cast<size_t>(procs));  // not zeroed
  std::vector<char*> out;
  for (int j = 0; j < procs; ++j) {
    blobs[j].reset(new char[bytes[j] + 1]);
    out.push_back(blobs[j].get());
  }
  auto copy = [&](const Piece& q, char* blob, bool into_blob) {
    const Aval& av = avals[q.o];
    const auto esize = static_cast<int64_t>(dtype_size(av.dtype));
    if (numel(q.block.shape) == 0) return;
    char* global = outs[q.o] + q.block.offset * esize;
    if (into_blob) {
      strided_copy(esize, q.block.shape, global, row_major_strides(av.shape), blob,
                   row_major_strides(q.block.shape));
    } else {
      strided_copy(esize, q.block.shape, blob, row_major_strides(q.block.shape), global,
                   row_major_strides(av.shape));
    }
  };
  std::vector<size_t> at(static_cast<size_t>(procs), 0);
  for (const Piece& q : pieces) {
    if (q.from == me) copy(q, blobs[me].get() + at[me], true);
    at[q.from] += size_of(q);
  }
  std::vector<int> all(static_cast<size_t>(procs));
  for (int j = 0; j < procs; ++j) all[j] = j;
  distributed::mpi::exchange(p.name().data(), /*tag=*/0, all, blobs[me].get(), bytes, out);
  std::fill(at.begin(), at.end(), 0);
  for (const Piece& q : pieces) {
    if (!q.here) copy(q, blobs[q.from].get() + at[q.from], false);
    at[q.from] += size_of(q);
  }
}

void check_mesh(const ShardMap& p, int available, const char* kind) {
  const int k = static_cast<int>(p.mesh().names.size());
  if (k > kMaxMeshAxes) fail(p.name(), "at most ", kMaxMeshAxes, " mesh axes, got ", k);
  const int64_t n = p.mesh().size();
  if (n > available) fail(p.name(), "needs ", n, " ", kind, "devices, there are ", available);
}

}  // namespace graft::cpu::shard_plan
