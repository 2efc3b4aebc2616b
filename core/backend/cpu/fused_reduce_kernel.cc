// CPU kernel of fused_reduce (core/primitives/fused_reduce.h). The group runs over the pieces
// its reduction consumes, in the order reduce_sum's kernel takes them (reduce_passes.h: rows
// spread over threads, each row in pieces of at most kPairwiseBlock elements; or columns in
// tiles, the rows streaming through them a chunk at a time): each piece of the reduced value
// goes to a per-thread buffer the reduction reads at once, so the value is never written out
// whole; the group's other outputs are written as fused_elementwise's kernel writes them. Same
// pieces in the same order, and each element computed once by the same code: the bits of the
// unfused group followed by the reduction. Where pieces would start off the 16-element grid
// the group's kernels assume (rows or columns whose length is not a multiple of 16), or the
// reduced value is not f32, the body runs as it is: the group's kernel, then the reduction's.
#include <absl/container/inlined_vector.h>

#include "core/backend/control_kernels.h"
#include "core/backend/cpu/fusion_kernels.h"
#include "core/backend/cpu/host_control.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/reduce_passes.h"
#include "core/primitives/fused_reduce.h"

namespace graft::cpu {
namespace {

using reduce_detail::Layout;
using reduce_detail::RowsAt;

Layout layout_of(const FusedReduce& p) { return {p.outer(), p.length(), p.inner()}; }

// Whether every piece the reduction takes starts on the 16-element grid.
bool on_grid(const FusedReduce& p, const Layout& l) {
  if (p.group().out_avals()[p.reduced()].dtype != DType::kF32) return false;
  if (l.outer * l.n * l.inner == 0) return false;
  // Rows: pieces start at row starts and the threads' split points; columns: at row starts
  // and the column parts' starts.
  const bool rows = l.inner == 1;
  if ((rows ? l.n : l.inner) % 16 != 0) return false;
  for (int64_t s :
       rows ? reduce_detail::row_piece_starts(l) : reduce_detail::column_part_starts(l)) {
    if (s % 16 != 0) return false;
  }
  return true;
}

// Runs the group over pieces of its elements for the reduction: each piece's outputs go where
// fused_elementwise would write them, and the reduced value, unless it is returned too, to a
// per-thread buffer.
class PieceRunner {
 public:
  PieceRunner(const FusedReduce& p, const fusion::GroupRunner& runner, char* const* whole)
      : runner_(runner), whole_(whole), n_(p.group().outputs().size()), reduced_(p.reduced()) {}

  // Elements [s, s + len) (s on the grid, len <= kBuffer); returns their reduced values.
  const float* run(int64_t s, int64_t len) const {
    float* dst = reinterpret_cast<float*>(whole_[reduced_]);
    dst = dst == nullptr ? buffer() : dst + s;
    run_into(s, len, dst);
    return dst;
  }

  // Rows `rows` of `w` elements from element s, one every `inner` elements (reduce_columns'
  // leaf): whole rows in one run, parts of rows one at a time (the elements between them
  // belong to other tasks).
  RowsAt<float> run_rows(int64_t s, int64_t rows, int64_t w, int64_t inner) const {
    if (w == inner) return {run(s, rows * w), inner};
    float* whole = reinterpret_cast<float*>(whole_[reduced_]);
    for (int64_t j = 0; j < rows; ++j) {
      run_into(s + j * inner, w, whole != nullptr ? whole + s + j * inner : buffer() + j * w);
    }
    return whole != nullptr ? RowsAt<float>{whole + s, inner} : RowsAt<float>{buffer(), w};
  }

  static constexpr int64_t kBuffer =
      std::max(reduce_detail::kPairwiseBlock, reduce_detail::kRowChunk);

 private:
  static float* buffer() {
    alignas(64) thread_local float piece[kBuffer];
    return piece;
  }
  void run_into(int64_t s, int64_t len, float* reduced_dst) const {
    absl::InlinedVector<char*, 8> at(n_);
    for (size_t o = 0; o < n_; ++o) {
      at[o] = whole_[o] == nullptr ? nullptr : whole_[o] + s * runner_.out_width(o);
    }
    at[reduced_] = reinterpret_cast<char*>(reduced_dst);
    runner_.run(s, s + len, at.data());
  }

  const fusion::GroupRunner& runner_;
  char* const* whole_;
  size_t n_;
  int reduced_;
};

template <typename Op>
void reduce_pieces(const Layout& l, float* out, const PieceRunner& pieces) {
  if (l.inner == 1) {
    reduce_detail::reduce_rows_pass<Op, float>(
        l, out, [&](int64_t s, int64_t len) { return pieces.run(s, len); });
  } else {
    reduce_detail::reduce_columns_pass<Op, float>(
        l, out, [&](int64_t s, int64_t k, int64_t w) { return pieces.run_rows(s, k, w, l.inner); });
  }
}

void fused_reduce_kernel(Call& c) {
  const auto& p = c.params<FusedReduce>();
  const FusedElementwise& f = p.group();
  const Layout l = layout_of(p);
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
  const PieceRunner pieces(p, runner, whole.data());
  switch (p.reduce_op()) {
    case PrimitiveId::kReduceSum:
      return reduce_pieces<reduce_detail::SumOp>(l, result, pieces);
    case PrimitiveId::kReduceMax:
      return reduce_pieces<reduce_detail::MaxOp>(l, result, pieces);
    default:
      return reduce_pieces<reduce_detail::MinOp>(l, result, pieces);
  }
}

}  // namespace

void register_fused_reduce_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kFusedReduce)] = &fused_reduce_kernel;
}

}  // namespace graft::cpu
