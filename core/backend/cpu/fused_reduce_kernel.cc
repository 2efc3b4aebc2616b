// CPU kernel of fused_reduce (core/primitives/fused_reduce.h). The group runs over the pieces
// its row reduction consumes, in the order reduce_sum's kernel takes them (reduce_rows.h's
// reduce_rows_pass: rows spread over threads, each row in pieces of at most kPairwiseBlock
// elements): each piece of the reduced value goes to a per-thread buffer the reduction reads at
// once, so the value is never written out whole; the group's other outputs are written as
// fused_elementwise's kernel writes them. Same pieces in the same order, and each element
// computed once by the same code: the bits of the unfused group followed by the reduction.
// Where pieces would start off the 16-element grid the group's kernels assume (rows whose
// length is not a multiple of 16), or the reduced value is not f32, the body runs as it is:
// the group's kernel, then the reduction's.
#include <absl/container/inlined_vector.h>

#include "core/backend/control_kernels.h"
#include "core/backend/cpu/fusion_kernels.h"
#include "core/backend/cpu/host_control.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/reduce_rows.h"
#include "core/primitives/fused_reduce.h"

namespace graft::cpu {
namespace {

using reduce_detail::kPairwiseBlock;
using reduce_detail::Layout;

bool on_grid(const FusedReduce& p, const Layout& l) {
  if (p.group().out_avals()[p.reduced()].dtype != DType::kF32) return false;
  if (l.outer * l.n == 0 || l.n % 16 != 0) return false;
  for (int64_t s : reduce_detail::row_piece_starts(l)) {
    if (s % 16 != 0) return false;
  }
  return true;
}

template <typename Op, typename Leaf>
void reduce_rows(const Layout& l, float* out, const Leaf& leaf) {
  reduce_detail::reduce_rows_pass<Op, float>(l, out, leaf);
}

void fused_reduce_kernel(Call& c) {
  const auto& p = c.params<FusedReduce>();
  const FusedElementwise& f = p.group();
  const Layout l{p.rows(), p.row_length(), 1};
  if (!on_grid(p, l)) {
    control::run_whole_body(c, HostControl{});
    return;
  }
  // Output buffers first (out_raw is not thread-safe); the reduced value has none unless it
  // is also returned.
  const size_t n_kept = p.kept().size();
  absl::InlinedVector<char*, 8> whole(f.outputs().size(), nullptr);
  for (size_t k = 0; k < n_kept; ++k) {
    whole[p.kept()[k]] = static_cast<char*>(c.out_raw(static_cast<int>(k)));
  }
  float* result = c.out<float>(static_cast<int>(n_kept));
  absl::InlinedVector<const void*, 16> ins(c.num_inputs());
  for (int i = 0; i < c.num_inputs(); ++i) ins[i] = c.in_raw(i);
  const fusion::GroupRunner runner(f, ins.data(), whole.data());
  const int reduced = p.reduced();
  const bool returned = whole[reduced] != nullptr;
  // Elements [s, s + len) of the reduced value (len <= kPairwiseBlock, s on the grid).
  auto leaf = [&](int64_t s, int64_t len) -> const float* {
    alignas(64) thread_local float piece[kPairwiseBlock];
    absl::InlinedVector<char*, 8> at(whole.size());
    for (size_t o = 0; o < whole.size(); ++o) {
      at[o] = whole[o] == nullptr ? nullptr : whole[o] + s * runner.out_width(o);
    }
    if (!returned) at[reduced] = reinterpret_cast<char*>(piece);
    runner.run(s, s + len, at.data());
    return reinterpret_cast<const float*>(at[reduced]);
  };
  switch (p.reduce_op()) {
    case PrimitiveId::kReduceSum:
      return reduce_rows<reduce_detail::SumOp>(l, result, leaf);
    case PrimitiveId::kReduceMax:
      return reduce_rows<reduce_detail::MaxOp>(l, result, leaf);
    default:
      return reduce_rows<reduce_detail::MinOp>(l, result, leaf);
  }
}

}  // namespace

void register_fused_reduce_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kFusedReduce)] = &fused_reduce_kernel;
}

}  // namespace graft::cpu
