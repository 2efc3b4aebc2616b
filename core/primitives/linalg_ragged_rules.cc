// Transform rules of ragged_dot. Both modes are bilinear in (lhs, rhs), and each mode's
// transpose is written with the two modes (m rows, g groups):
//   rows:     out[m,n] = lhs_i @ rhs[i]       d lhs = rows(ct, rhs^T)   d rhs = contract(lhs, ct)
//   contract: out[i]   = lhs_i^T @ rhs_i      d lhs = rows(rhs, ct^T)   d rhs = rows(lhs, ct)
// (^T swaps the last two dims). group_sizes is an integer: no derivative.
// Batching folds the batch into the rows and the groups: batch member b's rows follow member
// b-1's, and each member gets one extra group (a zero block in rows mode, dropped in
// contract mode) that covers its rows past its own groups, so members never share rows. The
// group sizes are first clamped exactly as the kernel clamps them.
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/linalg.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

namespace {

Array ragged(const Array& a, const Array& b, const Array& sizes, RaggedMode mode) {
  return apply<RaggedDot>({a, b, sizes}, mode);
}

Array swap_last(const Array& x) { return swapaxes(x, -1, -2); }

// [B, g] group sizes -> [B * (g + 1)]: each member's sizes clamped like the kernel clamps
// them (negative -> 0, ends capped at m), then a last group of the rows left over.
Array folded_sizes(const Array& sizes, int64_t m) {
  const int64_t b = sizes.shape()[0], g = sizes.shape()[1];
  Array mm = scalar(static_cast<double>(m), DType::kI32);
  Array pad;
  Array clamped;
  if (g == 0) {
    clamped = sizes;
    pad = full({b, 1}, static_cast<double>(m), DType::kI32);
  } else {
    Array ends = minimum(cumsum(maximum(sizes, scalar(0, DType::kI32)), 1), mm);
    Array starts = concatenate({zeros({b, 1}, DType::kI32), slice_axis(ends, 1, 0, g - 1)}, 1);
    clamped = ends - starts;
    pad = mm - slice_axis(ends, 1, g - 1, g);
  }
  return reshape(concatenate({clamped, pad}, 1), {b * (g + 1)});
}

}  // namespace

std::vector<Array> RaggedDot::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                                  const std::vector<Array>&) const {
  Array out;
  if (t[0].valid()) out = ragged(t[0], primals[1], primals[2], mode_);
  if (t[1].valid()) out = detail::add_any(out, ragged(primals[0], t[1], primals[2], mode_));
  return {out};
}

std::vector<Array> RaggedDot::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                  const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array(), Array(), Array()};
  const Array &lhs = primals[0], &rhs = primals[1], &sizes = primals[2];
  const Array c = astype(ct[0], lhs.dtype());
  if (mode_ == RaggedMode::kRaggedRows) {
    return {ragged(c, swap_last(rhs), sizes, RaggedMode::kRaggedRows),
            ragged(lhs, c, sizes, RaggedMode::kRaggedContract), Array()};
  }
  return {ragged(rhs, swap_last(c), sizes, RaggedMode::kRaggedRows),
          ragged(lhs, c, sizes, RaggedMode::kRaggedRows), Array()};
}

Batched RaggedDot::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t b = shape_rules::batch_size(args, dims);
  Array lhs = shape_rules::batch_to_front(args[0], dims[0], b);
  Array rhs = shape_rules::batch_to_front(args[1], dims[1], b);
  Array sizes = shape_rules::batch_to_front(args[2], dims[2], b);
  const int64_t m = lhs.shape()[1], k = lhs.shape()[2], g = sizes.shape()[1];
  Array fs = folded_sizes(sizes, m);
  Array fl = reshape(lhs, {b * m, k});
  if (mode_ == RaggedMode::kRaggedRows) {
    const int64_t n = rhs.shape()[3];
    Array fr =
        reshape(concatenate({rhs, zeros({b, 1, k, n}, rhs.dtype())}, 1), {b * (g + 1), k, n});
    return {{reshape(ragged(fl, fr, fs, mode_), {b, m, n})}, {0}};
  }
  const int64_t n = rhs.shape()[2];
  Array out = ragged(fl, reshape(rhs, {b * m, n}), fs, mode_);
  return {{slice_axis(reshape(out, {b, g + 1, k, n}), 1, 0, g)}, {0}};
}

}  // namespace graft
