// CPU kernels of the reduce family: reduce_{sum,prod,max,min,and,or} here, argmax/argmin and
// cumsum in scan_kernels.cc.
//
// A reduction over any set of axes is done without transposing: the shape is collapsed into
// alternating kept / reduced blocks, and each reduced block is removed by one pass over an
// [outer, n, inner] view, innermost block first (every pass after the first reads an output
// already smaller than the input). A pass with inner == 1 reduces contiguous rows with 16
// independent lanes (which the compiler vectorizes) combined pairwise for accuracy; a pass
// with inner > 1 streams whole rows into per-column accumulators (vectorized across columns),
// in row blocks so long sums stay accurate. Work is split over outputs (slices, then column
// ranges), or over the reduced axis when there are too few outputs to keep threads busy.
#include <limits>
#include <memory>
#include <vector>

#include "core/backend/cpu/reduce_passes.h"
#include "core/primitives/reduce.h"

namespace graft::cpu {

namespace reduce_detail {
int threads_for(int64_t work) {
  return work < 2 * kGrain ? 1 : static_cast<int>(std::min<int64_t>(num_threads(), work / kGrain));
}
}  // namespace reduce_detail

namespace {

using namespace reduce_detail;  // NOLINT: this file's own helpers

template <typename Op, typename In, typename A>
void reduce_pass(const In* x, A* out, const Layout& l) {
  if (l.inner == 1) {  // contiguous rows
    reduce_rows_pass<Op, A>(l, out, [x](int64_t s, int64_t) { return x + s; });
  } else {
    reduce_columns_pass<Op, A>(l, out, [x, &l](int64_t s, int64_t, int64_t) {
      return RowsAt<In>{x + s, l.inner};
    });
  }
}

// ---- the kernel ----

struct Block {
  int64_t size;
  bool reduced;
};

// Merges adjacent dims that are both kept or both reduced; size-1 dims do not matter.
std::vector<Block> collapse(const Shape& shape, const std::vector<int>& axes) {
  std::vector<Block> blocks;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (shape[i] == 1) continue;
    bool red = std::binary_search(axes.begin(), axes.end(), i);
    if (!blocks.empty() && blocks.back().reduced == red) {
      blocks.back().size *= shape[i];
    } else {
      blocks.push_back({shape[i], red});
    }
  }
  return blocks;
}

template <typename Op, typename T>
void reduce_kernel(Call& call) {
  using A = acc_t<Op, T>;
  const Shape& in_shape = call.in_aval(0).shape;
  const int64_t n_out = numel(call.out_aval().shape);
  T* out = call.out<T>();
  if (n_out == 0) return;
  const T* x = call.in<T>(0);
  if (numel(in_shape) == 0) {  // a reduced axis has size 0
    std::fill(out, out + n_out, static_cast<T>(Op::template identity<A>()));
    return;
  }
  std::vector<Block> blocks = collapse(in_shape, call.params<Reduce>().axes());
  std::unique_ptr<A[]> cur, next;  // accumulator-typed intermediates
  bool first = true;
  for (int j = static_cast<int>(blocks.size()) - 1; j >= 0; --j) {
    if (!blocks[j].reduced) continue;
    Layout l{1, blocks[j].size, 1};
    for (int k = 0; k < j; ++k) l.outer *= blocks[k].size;
    for (int k = j + 1; k < static_cast<int>(blocks.size()); ++k) l.inner *= blocks[k].size;
    bool last = true;
    for (int k = 0; k < j; ++k) last = last && !blocks[k].reduced;
    A* dst;
    if (last && std::is_same_v<A, T>) {
      dst = reinterpret_cast<A*>(out);
    } else {
      next.reset(new A[l.outer * l.inner]);
      dst = next.get();
    }
    if (first) {
      reduce_pass<Op, T, A>(x, dst, l);
    } else {
      reduce_pass<Op, A, A>(cur.get(), dst, l);
    }
    first = false;
    cur = std::move(next);
    blocks.erase(blocks.begin() + j);
  }
  if (first) {  // only size-1 axes were reduced: the data is unchanged
    std::copy(x, x + n_out, out);
    return;
  }
  if constexpr (!std::is_same_v<A, T>) {
    const A* acc = cur.get();
    parallel_for(n_out, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(acc[i]);
    });
  }
}

template <typename Op>
Kernel dispatch_reduce(DType d) {
  return dispatch_dtype(d, []<typename T>() -> Kernel {
    constexpr bool kArith = std::is_same_v<Op, SumOp> || std::is_same_v<Op, ProdOp>;
    constexpr bool kLogic = std::is_same_v<Op, AndOp> || std::is_same_v<Op, OrOp>;
    if constexpr ((kArith && std::is_same_v<T, bool>) || (kLogic && !std::is_integral_v<T>)) {
      return nullptr;
    } else {
      return &reduce_kernel<Op, T>;
    }
  });
}

template <typename Op>
void run_reduce(Call& call) {
  Kernel k = dispatch_reduce<Op>(call.in_aval(0).dtype);
  if (k == nullptr) fail(call.prim.name(), "has no CPU kernel for ", call.in_aval(0).str());
  k(call);
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  table[int(PrimitiveId::kReduceSum)] = &run_reduce<SumOp>;
  table[int(PrimitiveId::kReduceProd)] = &run_reduce<ProdOp>;
  table[int(PrimitiveId::kReduceMax)] = &run_reduce<MaxOp>;
  table[int(PrimitiveId::kReduceMin)] = &run_reduce<MinOp>;
  table[int(PrimitiveId::kReduceAnd)] = &run_reduce<AndOp>;
  table[int(PrimitiveId::kReduceOr)] = &run_reduce<OrOp>;
  reduce_detail::register_scan_kernels(table);
}

}  // namespace graft::cpu
