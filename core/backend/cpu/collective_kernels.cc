// CPU kernels of the collectives: the devices of a shard_map (one thread per virtual device,
// shard_map_kernel.cc) exchange buffer pointers through their in-process group
// (core/distributed/in_process.h) and each reads the others' buffers directly; members on
// other processes' devices send their inputs over MPI (core/distributed/mpi.h), fetched once
// per process. The all-reduces split the work: each member here reduces its share of the
// elements over all members and writes it into every output here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/backend/cpu/all_to_all_blocks.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/strided_copy.h"
#include "core/distributed/in_process.h"
#include "core/distributed/mpi.h"
#include "core/error.h"
#include "core/primitives/collective.h"

namespace graft::cpu {
namespace {

using distributed::InProcessGroup;
using distributed::Membership;

struct Published {
  const void* in;
  void* out;
};

// Member's view of the exchange: every member's (input, output), valid until done(). In a
// group that spans processes the first member of this process fetches the other processes'
// inputs (each `in_bytes` long) over MPI into a staging buffer the members here read; their
// outputs are null (each process writes only its own members' outputs).
struct Exchange {
  const Membership& me;
  const std::vector<const void*>* slots = nullptr;  // one process: by member rank
  std::vector<Published> view;                      // across processes: by member rank
  std::unique_ptr<char[]> staging;                  // the fetching member's
  const char* op;
  Exchange(const char* op_name, const Collective& p, const Published* mine, size_t in_bytes)
      : me(distributed::membership(op_name, p.mask())), op(op_name) {
    if (me.size() != p.group_size()) {
      fail(op, "the group has ", me.size(), " members, the collective expects ", p.group_size());
    }
    if (me.layout == nullptr) {
      slots = &me.group->exchange(op, me.rank, mine);
      return;
    }
    const distributed::GroupLayout& g = *me.layout;
    const int lr = me.local_rank();
    std::vector<Published> here;
    for (const void* v : me.group->exchange(op, lr, mine)) {
      here.push_back(*static_cast<const Published*>(v));
    }
    me.group->done(op);  // every member has its copy: the slots may be written again
    // This process's inputs go out packed in rank order; each process's arrive the same way.
    const void* shared = nullptr;
    if (lr == 0) {
      const size_t total = g.first_of.back() + g.count_of.back();
      staging.reset(new char[total * in_bytes + 1]);
      char* own = staging.get() + g.first_of[g.self] * in_bytes;
      for (size_t j = 0; j < here.size(); ++j) {
        if (in_bytes > 0) std::memcpy(own + j * in_bytes, here[j].in, in_bytes);
      }
      std::vector<size_t> bytes;
      std::vector<char*> out;
      for (size_t j = 0; j < g.procs.size(); ++j) {
        bytes.push_back(g.count_of[j] * in_bytes);
        out.push_back(staging.get() + g.first_of[j] * in_bytes);
      }
      distributed::InProcessGroup* group = me.group;
      distributed::mpi::exchange(op, g.tag, g.procs, own, bytes, out,
                                 [group] { return group->aborted(); });
      shared = staging.get();
    }
    const char* base = static_cast<const char*>(me.group->exchange(op, lr, shared)[0]);
    for (int q = 0; q < g.size(); ++q) {
      view.push_back(g.local[q] >= 0 ? here[g.local[q]]
                                     : Published{base + g.slot[q] * in_bytes, nullptr});
    }
  }
  // Waits until every member has read this one's buffers, unless this member is failing (the
  // shard_map then aborts the groups, which releases the others).
  ~Exchange() noexcept(false) {
    if (std::uncaught_exceptions() == 0) me.group->done(op);
  }
  const Published& of(int q) const {
    return slots != nullptr ? *static_cast<const Published*>((*slots)[q]) : view[q];
  }
  int size() const { return me.size(); }
  // The members on this process share the reductions' work: how many, and which one this is.
  int workers() const { return me.group->size(); }
  int worker() const { return me.local_rank(); }
};

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

// Worker w (a member on this process) reduces elements [lo, hi) over all members (source by
// source, so the inner loops vectorize), then copies that share into the output of every
// member on this process.
template <typename T>
void all_reduce(PrimitiveId id, const Exchange& x, int64_t count) {
  const int n = x.size();
  const int64_t share = (count + x.workers() - 1) / x.workers();
  const int64_t lo = std::min(count, share * x.worker()), hi = std::min(count, lo + share);
  if (hi == lo) return;
  std::vector<Acc<T>> acc(static_cast<size_t>(hi - lo));
  const T* first = static_cast<const T*>(x.of(0).in) + lo;
  for (int64_t e = 0; e < hi - lo; ++e) acc[e] = static_cast<Acc<T>>(first[e]);
  for (int q = 1; q < n; ++q) {
    const T* in = static_cast<const T*>(x.of(q).in) + lo;
    if (id == PrimitiveId::kPsum) {
      for (int64_t e = 0; e < hi - lo; ++e)
        acc[e] = static_cast<Acc<T>>(acc[e] + static_cast<Acc<T>>(in[e]));
      continue;
    }
    const bool is_max = id == PrimitiveId::kPmax;
    for (int64_t e = 0; e < hi - lo; ++e) {
      const auto v = static_cast<Acc<T>>(in[e]);
      const Acc<T> a = acc[e];
      if constexpr (std::is_floating_point_v<Acc<T>>) {
        if (std::isnan(a)) continue;  // NaN wins, the first one
        if (std::isnan(v)) {
          acc[e] = v;
          continue;
        }
      }
      acc[e] = is_max ? std::max(a, v) : std::min(a, v);
    }
  }
  T* mine = static_cast<T*>(x.of(x.me.rank).out) + lo;
  for (int64_t e = 0; e < hi - lo; ++e) mine[e] = static_cast<T>(acc[e]);
  for (int q = 0; q < n; ++q) {
    if (q == x.me.rank || x.of(q).out == nullptr) continue;
    std::memcpy(static_cast<T*>(x.of(q).out) + lo, mine, static_cast<size_t>(hi - lo) * sizeof(T));
  }
}

void all_reduce_kernel(Call& c) {
  const auto& p = c.params<AllReduce>();
  Published mine{c.in_raw(0), c.out_raw(0)};
  const int64_t count = numel(c.out_aval().shape);
  Exchange x(p.name().data(), p, &mine, count * dtype_size(c.out_aval().dtype));
  dispatch_dtype(c.out_aval().dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      // pmax / pmin of bool (psum is refused by its shape rule): or / and.
      all_reduce<uint8_t>(p.id(), x, count);
    } else {
      all_reduce<T>(p.id(), x, count);
    }
  });
}

// [outer, n, inner] element-block copies (all_gather and its relatives), in bytes.
int64_t prod(const Shape& s, size_t from, size_t to) {
  int64_t r = 1;
  for (size_t i = from; i < to; ++i) r *= s[i];
  return r;
}

void all_gather_kernel(Call& c) {
  const auto& p = c.params<AllGather>();
  const Shape& s = c.in_aval(0).shape;
  const auto esize = static_cast<int64_t>(dtype_size(c.in_aval(0).dtype));
  const int64_t outer = prod(s, 0, p.dim()), inner = prod(s, p.dim(), s.size()) * esize;
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("all_gather", p, &mine, numel(s) * esize);
  auto* out = static_cast<char*>(mine.out);
  const int n = x.size();
  for (int q = 0; q < n; ++q) {
    const auto* in = static_cast<const char*>(x.of(q).in);
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out + (o * n + q) * inner, in + o * inner, static_cast<size_t>(inner));
    }
  }
}

template <typename T>
void scatter_sum(const Exchange& x, int64_t outer, int64_t inner, T* out) {
  const int n = x.size(), r = x.me.rank;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Acc<T> acc = 0;
      for (int q = 0; q < n; ++q) {
        acc = static_cast<Acc<T>>(
            acc + static_cast<Acc<T>>(static_cast<const T*>(x.of(q).in)[(o * n + r) * inner + i]));
      }
      out[o * inner + i] = static_cast<T>(acc);
    }
  }
}

void psum_scatter_kernel(Call& c) {
  const auto& p = c.params<PsumScatter>();
  const Shape& s = c.in_aval(0).shape;
  const int n = static_cast<int>(p.sizes()[0]);
  const int64_t outer = prod(s, 0, p.dim());
  const int64_t inner = prod(s, p.dim() + 1, s.size()) * (p.tiled() ? s[p.dim()] / n : 1);
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("psum_scatter", p, &mine, numel(s) * dtype_size(c.in_aval(0).dtype));
  dispatch_dtype(c.out_aval().dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      scatter_sum<T>(x, outer, inner, static_cast<T*>(mine.out));
  });
}

// One strided copy per member (all_to_all_blocks.h).
void all_to_all_kernel(Call& c) {
  const auto& p = c.params<AllToAll>();
  const auto esize = static_cast<int64_t>(dtype_size(c.in_aval(0).dtype));
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("all_to_all", p, &mine, numel(c.in_aval(0).shape) * esize);
  const AllToAllBlocks b = all_to_all_blocks(p, x.size(), c.in_aval(0).shape, c.out_aval().shape);
  const int r = x.me.rank;
  if (numel(b.block) == 0) return;
  auto* out = static_cast<char*>(mine.out);
  for (int q = 0; q < x.size(); ++q) {
    strided_copy(esize, b.block, static_cast<const char*>(x.of(q).in) + r * b.src_step * esize,
                 b.src_strides, out + q * b.dst_step * esize, b.dst_strides);
  }
}

void ppermute_kernel(Call& c) {
  const auto& p = c.params<Ppermute>();
  const auto bytes =
      static_cast<size_t>(numel(c.out_aval().shape) * dtype_size(c.out_aval().dtype));
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("ppermute", p, &mine, bytes);
  const int src = p.source_of(x.me.rank);
  if (bytes == 0) return;
  if (src < 0) {
    std::memset(mine.out, 0, bytes);
  } else {
    std::memcpy(mine.out, x.of(src).in, bytes);
  }
}

void axis_index_kernel(Call& c) {
  const auto& p = c.params<AxisIndex>();
  *c.out<int32_t>() = distributed::membership("axis_index", p.mask()).rank;
}

void pvary_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

void register_shard_map_kernel(KernelTable& table);

void register_collective_kernels(KernelTable& table) {
  for (PrimitiveId id : {PrimitiveId::kPsum, PrimitiveId::kPmax, PrimitiveId::kPmin}) {
    table[static_cast<int>(id)] = &all_reduce_kernel;
  }
  table[static_cast<int>(PrimitiveId::kAllGather)] = &all_gather_kernel;
  table[static_cast<int>(PrimitiveId::kPsumScatter)] = &psum_scatter_kernel;
  table[static_cast<int>(PrimitiveId::kAllToAll)] = &all_to_all_kernel;
  table[static_cast<int>(PrimitiveId::kPpermute)] = &ppermute_kernel;
  table[static_cast<int>(PrimitiveId::kAxisIndex)] = &axis_index_kernel;
  table[static_cast<int>(PrimitiveId::kPvary)] = &pvary_kernel;
  table[static_cast<int>(PrimitiveId::kShardingConstraint)] = &pvary_kernel;  // the identity
  register_shard_map_kernel(table);
}

}  // namespace graft::cpu
