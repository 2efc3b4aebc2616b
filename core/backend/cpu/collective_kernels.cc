// CPU kernels of the collectives: the devices of a shard_map (one thread per virtual device,
// shard_map_kernel.cc) exchange buffer pointers through their in-process group
// (core/distributed/in_process.h) and each reads the others' buffers directly. The
// all-reduces split the work: member r reduces its share of the elements over all members
// and writes it into every member's output.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <type_traits>

#include "core/backend/cpu/kernel.h"
#include "core/distributed/in_process.h"
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

// Member's view of the exchange: every member's (input, output), valid until done().
struct Exchange {
  const Membership& me;
  const std::vector<const void*>* slots;
  const char* op;
  Exchange(const char* op_name, const Collective& p, const Published* mine)
      : me(distributed::membership(op_name, p.mask())), op(op_name) {
    if (me.group->size() != p.group_size()) {
      fail(op, "the group has ", me.group->size(), " members, the collective expects ",
           p.group_size());
    }
    slots = &me.group->exchange(op, me.rank, mine);
  }
  // Waits until every member has read this one's buffers, unless this member is failing (the
  // shard_map then aborts the groups, which releases the others).
  ~Exchange() noexcept(false) {
    if (std::uncaught_exceptions() == 0) me.group->done(op);
  }
  const Published& of(int q) const { return *static_cast<const Published*>((*slots)[q]); }
  int size() const { return me.group->size(); }
};

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

template <typename T>
void all_reduce(PrimitiveId id, const Exchange& x, int64_t count) {
  const int n = x.size();
  const int64_t share = (count + n - 1) / n;
  const int64_t lo = std::min(count, share * x.me.rank), hi = std::min(count, lo + share);
  for (int64_t e = lo; e < hi; ++e) {
    auto acc = static_cast<Acc<T>>(static_cast<const T*>(x.of(0).in)[e]);
    for (int q = 1; q < n; ++q) {
      auto v = static_cast<Acc<T>>(static_cast<const T*>(x.of(q).in)[e]);
      if (id == PrimitiveId::kPsum) {
        acc = static_cast<Acc<T>>(acc + v);
      } else if constexpr (std::is_floating_point_v<Acc<T>>) {
        if (std::isnan(v) || std::isnan(acc)) {
          acc = std::isnan(acc) ? acc : v;
        } else {
          acc = id == PrimitiveId::kPmax ? std::max(acc, v) : std::min(acc, v);
        }
      } else {
        acc = id == PrimitiveId::kPmax ? std::max(acc, v) : std::min(acc, v);
      }
    }
    for (int q = 0; q < n; ++q) static_cast<T*>(x.of(q).out)[e] = static_cast<T>(acc);
  }
}

void all_reduce_kernel(Call& c) {
  const auto& p = c.params<AllReduce>();
  Published mine{c.in_raw(0), c.out_raw(0)};
  const int64_t count = numel(c.out_aval().shape);
  Exchange x(p.name().data(), p, &mine);
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
  Exchange x("all_gather", p, &mine);
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
  Exchange x("psum_scatter", p, &mine);
  dispatch_dtype(c.out_aval().dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      scatter_sum<T>(x, outer, inner, static_cast<T*>(mine.out));
  });
}

void all_to_all_kernel(Call& c) {
  const auto& p = c.params<AllToAll>();
  const Shape& in_shape = c.in_aval(0).shape;
  const Shape& out_shape = c.out_aval().shape;
  const auto esize = static_cast<int64_t>(dtype_size(c.in_aval(0).dtype));
  const int n = static_cast<int>(p.sizes()[0]);
  const int split = p.split(), concat = p.concat();
  const int64_t k = p.tiled() ? in_shape[split] / n : 1;
  // Row-major strides of the input.
  std::vector<int64_t> stride(in_shape.size(), 1);
  for (size_t i = in_shape.size(); i-- > 1;) stride[i - 1] = stride[i] * in_shape[i];
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("all_to_all", p, &mine);
  auto* out = static_cast<char*>(mine.out);
  const int64_t total = numel(out_shape);
  std::vector<int64_t> idx(out_shape.size(), 0), src;
  const int64_t block = p.tiled() ? out_shape[concat] / n : 1;
  for (int64_t e = 0; e < total; ++e) {
    // Output index -> the sending member q and the index in q's input.
    int q;
    if (p.tiled()) {
      src = idx;
      q = static_cast<int>(idx[concat] / block);
      src[concat] = idx[concat] % block;
      src[split] += x.me.rank * k;
    } else {
      q = static_cast<int>(idx[concat]);
      src = idx;
      src.erase(src.begin() + concat);
      src.insert(src.begin() + split, x.me.rank);
    }
    int64_t off = 0;
    for (size_t i = 0; i < src.size(); ++i) off += src[i] * stride[i];
    std::memcpy(out + e * esize, static_cast<const char*>(x.of(q).in) + off * esize,
                static_cast<size_t>(esize));
    for (size_t i = idx.size(); i-- > 0;) {  // next output index
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
}

void ppermute_kernel(Call& c) {
  const auto& p = c.params<Ppermute>();
  const auto bytes =
      static_cast<size_t>(numel(c.out_aval().shape) * dtype_size(c.out_aval().dtype));
  Published mine{c.in_raw(0), c.out_raw(0)};
  Exchange x("ppermute", p, &mine);
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
  register_shard_map_kernel(table);
}

}  // namespace graft::cpu
