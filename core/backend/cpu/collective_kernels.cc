// CPU kernels of the collectives: the devices of a shard_map (one thread per virtual device,
// shard_map_kernel.cc) exchange buffer pointers through their in-process group
// (core/distributed/in_process.h) and each reads the others' buffers directly. The all-reduces
// split the work: each member here reduces its share of the elements and writes it into every
// output here.
//
// A group that spans processes goes hierarchically, through MPI's own algorithms
// (core/distributed/mpi_collectives.h), one call per process by its first member here: psum /
// pmax / pmin reduce the members here in memory and MPI_Allreduce the partial; psum_scatter
// sums them into a partial packed by process and MPI_Reduce_scatters it; all_to_all and
// ppermute send each other process exactly the blocks its members need (point to point);
// all_gather gathers every member's input with MPI_Allgatherv.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/backend/cpu/all_to_all_blocks.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/strided_copy.h"
#include "core/buffer.h"
#include "core/distributed/in_process.h"
#include "core/distributed/mpi.h"
#include "core/distributed/mpi_collectives.h"
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

// What the first member's MPI calls poll: true once another member here failed (the
// shard_map then aborts the group).
std::function<bool()> group_aborted(const Membership& me) {
  distributed::InProcessGroup* group = me.group;
  return [group] { return group->aborted(); };
}

// Member's view of the exchange: every member's (input, output), valid until done(). In a
// group that spans processes (all_gather's; the other collectives go their own ways there,
// below) the first member of this process gathers the other processes' inputs (each
// `in_bytes` long) over MPI into a staging buffer the members here read; their outputs are
// null (each process writes only its own members' outputs).
struct Exchange {
  const Membership& me;
  const std::vector<const void*>* slots = nullptr;  // one process: by member rank
  std::vector<Published> view;                      // across processes: by member rank
  std::shared_ptr<Buffer> staging;  // the fetching member's (cached blocks: no fresh pages)
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
      staging = Buffer::make(total * in_bytes + 1, "collective staging");
      char* base = static_cast<char*>(staging->data());
      char* own = base + g.first_of[g.self] * in_bytes;
      for (size_t j = 0; j < here.size(); ++j) {
        if (in_bytes > 0) std::memcpy(own + j * in_bytes, here[j].in, in_bytes);
      }
      std::vector<size_t> bytes;
      for (size_t j = 0; j < g.procs.size(); ++j) bytes.push_back(g.count_of[j] * in_bytes);
      distributed::mpi::all_gather(op, g.tag, g.procs, own, bytes, base, group_aborted(me));
      shared = base;
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

// acc[0, hi - lo) = elements [lo, hi) reduced over `ins` in order: summed, or their max / min
// where a NaN wins (the first one).
template <typename T>
void reduce_range(PrimitiveId id, const std::vector<const T*>& ins, int64_t lo, int64_t hi,
                  Acc<T>* acc) {
  for (int64_t e = 0; e < hi - lo; ++e) acc[e] = static_cast<Acc<T>>(ins[0][lo + e]);
  const bool is_max = id == PrimitiveId::kPmax;
  for (size_t q = 1; q < ins.size(); ++q) {
    const T* in = ins[q] + lo;
    if (id == PrimitiveId::kPsum) {
      for (int64_t e = 0; e < hi - lo; ++e)
        acc[e] = static_cast<Acc<T>>(acc[e] + static_cast<Acc<T>>(in[e]));
      continue;
    }
    for (int64_t e = 0; e < hi - lo; ++e) {
      const auto v = static_cast<Acc<T>>(in[e]);
      const Acc<T> a = acc[e];
      if constexpr (std::is_floating_point_v<Acc<T>>) {
        if (std::isnan(a)) continue;
        if (std::isnan(v)) {
          acc[e] = v;
          continue;
        }
      }
      acc[e] = is_max ? std::max(a, v) : std::min(a, v);
    }
  }
}

// The share [lo, hi) of `count` elements that worker `w` of `workers` takes.
std::pair<int64_t, int64_t> share_of(int64_t count, int w, int workers) {
  const int64_t share = (count + workers - 1) / workers;
  const int64_t lo = std::min(count, share * w);
  return {lo, std::min(count, lo + share)};
}

// Worker w (a member on this process) reduces elements [lo, hi) over all members (source by
// source, so the inner loops vectorize), then copies that share into the output of every
// member on this process.
template <typename T>
void all_reduce(PrimitiveId id, const Exchange& x, int64_t count) {
  const auto [lo, hi] = share_of(count, x.worker(), x.workers());
  if (hi == lo) return;
  std::vector<const T*> ins;
  for (int q = 0; q < x.size(); ++q) ins.push_back(static_cast<const T*>(x.of(q).in));
  std::vector<Acc<T>> acc(static_cast<size_t>(hi - lo));
  reduce_range<T>(id, ins, lo, hi, acc.data());
  T* mine = static_cast<T*>(x.of(x.me.rank).out) + lo;
  for (int64_t e = 0; e < hi - lo; ++e) mine[e] = static_cast<T>(acc[e]);
  for (int q = 0; q < x.size(); ++q) {
    if (q == x.me.rank || x.of(q).out == nullptr) continue;
    std::memcpy(static_cast<T*>(x.of(q).out) + lo, mine, static_cast<size_t>(hi - lo) * sizeof(T));
  }
}

template <typename A>
constexpr distributed::mpi::Elem elem_of() {
  using E = distributed::mpi::Elem;
  if constexpr (std::is_same_v<A, float>) return E::kF32;
  if constexpr (std::is_same_v<A, double>) return E::kF64;
  if constexpr (std::is_same_v<A, int8_t>) return E::kI8;
  if constexpr (std::is_same_v<A, int16_t>) return E::kI16;
  if constexpr (std::is_same_v<A, int32_t>) return E::kI32;
  if constexpr (std::is_same_v<A, int64_t>) return E::kI64;
  if constexpr (std::is_same_v<A, uint8_t>) return E::kU8;
  if constexpr (std::is_same_v<A, uint16_t>) return E::kU16;
  if constexpr (std::is_same_v<A, uint32_t>) return E::kU32;
  return E::kU64;
}

distributed::mpi::Reduction reduction_of(PrimitiveId id) {
  if (id == PrimitiveId::kPmax) return distributed::mpi::Reduction::kMax;
  if (id == PrimitiveId::kPmin) return distributed::mpi::Reduction::kMin;
  return distributed::mpi::Reduction::kSum;
}

// The members of a group that spans processes, as the members on this process see each other
// (in-memory, by local rank): their input and output, and the first one's scratch buffer.
struct Local {
  const void* in;
  void* out;
  void* scratch;
};

// Publishes this member's (in, out, scratch) and returns those of the members here, by local
// rank, once every member has its copy (`mine` may go then); the caller ends with
// me.group->done so that the first one's scratch outlives the reads.
std::vector<Local> meet_here(const char* op, const Membership& me, const Collective& p,
                             const Local& mine) {
  if (me.size() != p.group_size()) {
    fail(op, "the group has ", me.size(), " members, the collective expects ", p.group_size());
  }
  std::vector<Local> here;
  for (const void* v : me.group->exchange(op, me.local_rank(), &mine)) {
    here.push_back(*static_cast<const Local*>(v));
  }
  me.group->done(op);
  return here;
}

// An all-reduce over a group that spans processes, hierarchically: the members here reduce
// their inputs in memory into one partial (each worker its share), the first member
// all-reduces the partial with the other processes (MPI_Allreduce's own algorithm: (P-1)/P of
// the bytes each way, not every input to every process), and each worker copies its share of
// the result into every output here.
template <typename T>
void all_reduce_across_processes(PrimitiveId id, const char* op, const Collective& p,
                                 const Membership& me, const void* in, void* out, int64_t count) {
  const int lr = me.local_rank(), workers = me.group->size();
  // The partial: the first member's output when it has the accumulator's type, else a buffer
  // of the first member's (from the cache of freed blocks: no fresh pages to fault in).
  std::shared_ptr<Buffer> scratch;
  void* partial = out;
  if (lr == 0 && !std::is_same_v<Acc<T>, T>) {
    scratch = Buffer::make(static_cast<size_t>(count) * sizeof(Acc<T>) + 1, "psum partial");
    partial = scratch->data();
  }
  const std::vector<Local> here = meet_here(op, me, p, Local{in, out, partial});
  auto* all = static_cast<Acc<T>*>(here[0].scratch);
  const auto [lo, hi] = share_of(count, lr, workers);
  std::vector<const T*> ins;
  for (const Local& l : here) ins.push_back(static_cast<const T*>(l.in));
  if (hi > lo) reduce_range<T>(id, ins, lo, hi, all + lo);
  me.group->done(op);  // the partial is whole
  if (lr == 0) {
    distributed::mpi::all_reduce(op, me.layout->tag, me.layout->procs, all,
                                 static_cast<size_t>(count), elem_of<Acc<T>>(), reduction_of(id),
                                 group_aborted(me));
  }
  me.group->done(op);  // the partial holds the result
  for (const Local& l : here) {
    T* o = static_cast<T*>(l.out);
    if (static_cast<void*>(o) == static_cast<void*>(all)) continue;  // the partial itself
    for (int64_t e = lo; e < hi; ++e) o[e] = static_cast<T>(all[e]);
  }
  me.group->done(op);  // every share copied: the partial may go
}

void all_reduce_kernel(Call& c) {
  const auto& p = c.params<AllReduce>();
  const int64_t count = numel(c.out_aval().shape);
  const Membership& me = distributed::membership(p.name().data(), p.mask());
  if (me.layout != nullptr) {
    dispatch_dtype(c.out_aval().dtype, [&]<typename T>() {
      using U = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;  // bool: or / and
      all_reduce_across_processes<U>(p.id(), p.name().data(), p, me, c.in_raw(0), c.out_raw(0),
                                     count);
    });
    return;
  }
  Published mine{c.in_raw(0), c.out_raw(0)};
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

// A psum_scatter over a group that spans processes, hierarchically: the members here sum their
// inputs in memory into one partial packed for MPI_Reduce_scatter (the blocks of each process's
// members together, processes in order; each worker its rows), the first member
// reduce-scatters it with the other processes (each process receives only its members' blocks:
// (P-1)/P of the bytes, not every input), and each member copies its block out.
template <typename T>
void psum_scatter_across_processes(const char* op, const Collective& p, const Membership& me,
                                   const void* in, void* out, int64_t outer, int64_t inner) {
  const distributed::GroupLayout& g = *me.layout;
  const int n = g.size(), lr = me.local_rank(), workers = me.group->size();
  const int64_t block = outer * inner;  // one member's output, in elements
  const int64_t mine_count = g.count_of[g.self] * block;
  std::shared_ptr<Buffer> scratch;  // the first member's: the packed partial, then the result
  if (lr == 0) {
    scratch = Buffer::make(static_cast<size_t>(n * block + mine_count) * sizeof(Acc<T>) + 1,
                           "psum_scatter partial");
  }
  const std::vector<Local> here =
      meet_here(op, me, p, Local{in, out, scratch ? scratch->data() : nullptr});
  auto* packed = static_cast<Acc<T>*>(here[0].scratch);
  Acc<T>* result = packed + n * block;
  const auto [lo, hi] = share_of(n * outer, lr, workers);  // rows (member r, outer index o)
  for (int64_t k = lo; k < hi; ++k) {
    const int64_t r = k / outer, o = k % outer;
    Acc<T>* dst = packed + (g.slot[r] * outer + o) * inner;
    for (size_t q = 0; q < here.size(); ++q) {
      const T* src = static_cast<const T*>(here[q].in) + (o * n + r) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const auto v = static_cast<Acc<T>>(src[i]);
        dst[i] = q == 0 ? v : static_cast<Acc<T>>(dst[i] + v);
      }
    }
  }
  me.group->done(op);  // the partial is whole
  if (lr == 0) {
    std::vector<size_t> counts;
    for (int c : g.count_of) counts.push_back(static_cast<size_t>(c * block));
    distributed::mpi::reduce_scatter(op, g.tag, g.procs, packed, result, counts,
                                     elem_of<Acc<T>>(), distributed::mpi::Reduction::kSum,
                                     group_aborted(me));
  }
  me.group->done(op);  // this process's blocks are summed
  const Acc<T>* src = result + (g.slot[me.rank] - g.first_of[g.self]) * block;
  T* dst = static_cast<T*>(out);
  for (int64_t e = 0; e < block; ++e) dst[e] = static_cast<T>(src[e]);
  me.group->done(op);  // every block copied: the scratch may go
}

void psum_scatter_kernel(Call& c) {
  const auto& p = c.params<PsumScatter>();
  const Shape& s = c.in_aval(0).shape;
  const int n = static_cast<int>(p.sizes()[0]);
  const int64_t outer = prod(s, 0, p.dim());
  const int64_t inner = prod(s, p.dim() + 1, s.size()) * (p.tiled() ? s[p.dim()] / n : 1);
  const Membership& me = distributed::membership("psum_scatter", p.mask());
  if (me.layout != nullptr) {
    dispatch_dtype(c.out_aval().dtype, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>)
        psum_scatter_across_processes<T>("psum_scatter", p, me, c.in_raw(0), c.out_raw(0), outer,
                                         inner);
    });
    return;
  }
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("psum_scatter", p, &mine, numel(s) * dtype_size(c.in_aval(0).dtype));
  dispatch_dtype(c.out_aval().dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      scatter_sum<T>(x, outer, inner, static_cast<T*>(mine.out));
  });
}

// Where a spanning group's members sit, by process: process index (in procs) and position
// among that process's members (slot order) of each member rank, and the rank at each slot.
struct Seats {
  std::vector<int> proc, pos, rank_at;
  explicit Seats(const distributed::GroupLayout& g)
      : proc(g.size()), pos(g.size()), rank_at(g.size()) {
    for (int r = 0; r < g.size(); ++r) {
      proc[r] = static_cast<int>(std::find(g.procs.begin(), g.procs.end(), g.process[r]) -
                                 g.procs.begin());
      pos[r] = g.slot[r] - g.first_of[proc[r]];
      rank_at[g.slot[r]] = r;
    }
  }
};

// The staging of a point-to-point exchange between this process's members and the other
// processes of a group: per process j, send[j] bytes out and recv[j] bytes in, packed by
// process in one buffer of the first member here (every send part, then every receive part).
struct Staging {
  std::vector<size_t> send, recv, send_at, recv_at;
  size_t sends = 0, recvs = 0;
  std::shared_ptr<Buffer> buffer;  // the first member's; the others reach it through meet_here

  Staging(std::vector<size_t> send_bytes, std::vector<size_t> recv_bytes, const Membership& me,
          const char* what)
      : send(std::move(send_bytes)), recv(std::move(recv_bytes)) {
    for (size_t j = 0; j < send.size(); ++j) {
      send_at.push_back(sends);
      recv_at.push_back(recvs);
      sends += send[j];
      recvs += recv[j];
    }
    if (me.local_rank() == 0) buffer = Buffer::make(sends + recvs + 1, what);
  }
  void* mine() const { return buffer ? buffer->data() : nullptr; }
  // Once the members have packed into `base` (the first member's buffer): the first member
  // sends and receives every process's part; returns when they have arrived, for every member.
  void exchange(const char* op, const Membership& me, char* base) const {
    me.group->done(op);  // packed
    if (me.local_rank() == 0) {
      std::vector<const char*> from;
      std::vector<char*> into;
      for (size_t j = 0; j < send.size(); ++j) {
        from.push_back(base + send_at[j]);
        into.push_back(base + sends + recv_at[j]);
      }
      distributed::mpi::send_receive(op, me.layout->tag, me.layout->procs, from, send, into, recv,
                                     group_aborted(me));
    }
    me.group->done(op);  // arrived
  }
};

// An all_to_all over a group that spans processes: each member here packs its blocks for the
// members of every other process, the first member sends each process exactly its members'
// blocks (point to point, MPI_Alltoallv's pattern), and each member takes the blocks of members
// here from their inputs and the others from what arrived. Process j's part holds, for each of
// its members r (slot order), the block of each member q here (local order) to r.
void all_to_all_across_processes(const AllToAll& p, const Membership& me, const void* in,
                                 void* out, const AllToAllBlocks& b, int64_t esize) {
  const char* op = "all_to_all";
  const distributed::GroupLayout& g = *me.layout;
  const Seats seats(g);
  const int np = static_cast<int>(g.procs.size()), lr = me.local_rank(), h = me.group->size();
  const auto block = static_cast<size_t>(numel(b.block) * esize);
  std::vector<size_t> bytes(np, 0);  // the same both ways: process j's members x mine
  for (int j = 0; j < np; ++j) {
    if (j != g.self) bytes[j] = static_cast<size_t>(g.count_of[j]) * h * block;
  }
  const Staging st(bytes, bytes, me, "all_to_all staging");
  const std::vector<Local> here = meet_here(op, me, p, Local{in, out, st.mine()});
  char* base = static_cast<char*>(here[0].scratch);
  char* recvbuf = base + st.sends;
  const Shape dense = row_major_strides(b.block);
  for (int j = 0; j < np; ++j) {  // this member's blocks for process j's members
    if (j == g.self) continue;
    for (int k = 0; k < g.count_of[j]; ++k) {
      const int r = seats.rank_at[g.first_of[j] + k];
      strided_copy(esize, b.block, static_cast<const char*>(in) + r * b.src_step * esize,
                   b.src_strides, base + st.send_at[j] + (k * h + lr) * block, dense);
    }
  }
  st.exchange(op, me, base);
  const int r = me.rank;
  for (int q = 0; q < g.size(); ++q) {
    const int j = seats.proc[q];
    char* to = static_cast<char*>(out) + q * b.dst_step * esize;
    if (j == g.self) {
      strided_copy(esize, b.block,
                   static_cast<const char*>(here[g.local[q]].in) + r * b.src_step * esize,
                   b.src_strides, to, b.dst_strides);
    } else {
      const size_t at = st.recv_at[j] + (seats.pos[r] * g.count_of[j] + seats.pos[q]) * block;
      strided_copy(esize, b.block, recvbuf + at, dense, to, b.dst_strides);
    }
  }
  me.group->done(op);  // every block taken: the staging may go
}

// One strided copy per member (all_to_all_blocks.h).
void all_to_all_kernel(Call& c) {
  const auto& p = c.params<AllToAll>();
  const auto esize = static_cast<int64_t>(dtype_size(c.in_aval(0).dtype));
  const Membership& me = distributed::membership("all_to_all", p.mask());
  if (me.layout != nullptr) {  // meet_here checks the group's size
    const AllToAllBlocks b = all_to_all_blocks(p, me.size(), c.in_aval(0).shape, c.out_aval().shape);
    all_to_all_across_processes(p, me, c.in_raw(0), c.out_raw(0), b, esize);
    return;
  }
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

// A ppermute over a group that spans processes: only the pairs whose source and destination
// are on different processes cross, each process sending each other one the inputs its pairs
// need, in destination rank order (point to point); pairs within a process copy in memory.
void ppermute_across_processes(const Ppermute& p, const Membership& me, const void* in,
                               void* out, size_t bytes) {
  const char* op = "ppermute";
  const distributed::GroupLayout& g = *me.layout;
  const Seats seats(g);
  const int np = static_cast<int>(g.procs.size()), n = g.size();
  std::vector<size_t> send(np, 0), recv(np, 0);
  std::vector<size_t> at(n, 0);  // per destination rank: its part in the send or receive buffer
  for (int r = 0; r < n; ++r) {
    const int q = p.source_of(r);
    if (q < 0 || seats.proc[q] == seats.proc[r]) continue;
    if (seats.proc[q] == g.self) {
      at[r] = send[seats.proc[r]];
      send[seats.proc[r]] += bytes;
    } else if (seats.proc[r] == g.self) {
      at[r] = recv[seats.proc[q]];
      recv[seats.proc[q]] += bytes;
    }
  }
  const Staging st(send, recv, me, "ppermute staging");
  const std::vector<Local> here = meet_here(op, me, p, Local{in, out, st.mine()});
  char* base = static_cast<char*>(here[0].scratch);
  for (int r = 0; r < n; ++r) {  // this member's input, to the other processes' members
    if (p.source_of(r) != me.rank || seats.proc[r] == g.self || bytes == 0) continue;
    std::memcpy(base + st.send_at[seats.proc[r]] + at[r], in, bytes);
  }
  st.exchange(op, me, base);
  const int q = p.source_of(me.rank);
  if (bytes > 0) {
    if (q < 0) {
      std::memset(out, 0, bytes);
    } else if (seats.proc[q] == g.self) {
      std::memcpy(out, here[g.local[q]].in, bytes);
    } else {
      std::memcpy(out, base + st.sends + st.recv_at[seats.proc[q]] + at[me.rank], bytes);
    }
  }
  me.group->done(op);  // every input read: the staging may go
}

void ppermute_kernel(Call& c) {
  const auto& p = c.params<Ppermute>();
  const auto bytes =
      static_cast<size_t>(numel(c.out_aval().shape) * dtype_size(c.out_aval().dtype));
  const Membership& me = distributed::membership("ppermute", p.mask());
  if (me.layout != nullptr) {  // meet_here checks the group's size
    ppermute_across_processes(p, me, c.in_raw(0), c.out_raw(0), bytes);
    return;
  }
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
