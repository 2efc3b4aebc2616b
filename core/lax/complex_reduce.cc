// Complex reductions and ordering (the reduce primitives and sort take real values): prod,
// max and min as a pairwise tree over the reduced elements, and the lexicographic argsort.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"

namespace graft::detail {
namespace {

// The combiner of a reduction or scatter primitive, on complex values: a product, or the
// lexicographic max / min.
Array combine(PrimitiveId id, const Array& a, const Array& b) {
  switch (id) {
    case PrimitiveId::kReduceProd:
    case PrimitiveId::kScatterMul:
      return a * b;
    case PrimitiveId::kReduceMax:
    case PrimitiveId::kScatterMax:
      return maximum(a, b);
    default:
      return minimum(a, b);
  }
}

}  // namespace

Array complex_reduce(PrimitiveId id, const Array& z, const std::vector<int>& axes, bool keepdims) {
  if (axes.empty()) return z;
  // The reduced axes moved last and merged into one of n elements.
  std::vector<int> perm;
  Shape kept, out_keep = z.shape();
  int64_t n = 1;
  for (int d = 0; d < z.ndim(); ++d) {
    if (std::binary_search(axes.begin(), axes.end(), d)) {  // axes are sorted
      n *= z.shape()[d];
      out_keep[d] = 1;
    } else {
      perm.push_back(d);
      kept.push_back(z.shape()[d]);
    }
  }
  perm.insert(perm.end(), axes.begin(), axes.end());
  Shape flat = kept;
  flat.push_back(n);
  Array y = reshape(transpose(z, perm), flat);
  const int last = static_cast<int>(kept.size());
  if (n == 0) {  // only prod gets here (max / min of nothing are errors first)
    y = ones(kept, z.dtype());
  } else {
    // Halve until one element is left: combine the first half with the second; an odd one out
    // rides along to the next round.
    while (n > 1) {
      const int64_t h = n / 2;
      Array a = slice_axis(y, last, 0, h), b = slice_axis(y, last, h, 2 * h);
      Array c = combine(id, a, b);
      y = n % 2 ? concatenate({c, slice_axis(y, last, 2 * h, n)}, last) : c;
      n = h + n % 2;
    }
    y = reshape(y, kept);
  }
  return keepdims ? reshape(y, out_keep) : y;
}

Array complex_argsort(const Array& z, int axis) {
  // Stable sorts: by the imaginary part, then by the real part of that order.
  Array first = argsort(imag(z), axis);
  Array re = take_along_axis(real(z), first, axis);
  return take_along_axis(first, argsort(re, axis), axis);
}

Array complex_scatter_reduce(const Array& x, const Array& positions, const Array& updates,
                             PrimitiveId id) {
  const int64_t n = x.size(), m = positions.size();
  if (m == 0 || n == 0) return x;
  auto op = [id](const Array& a, const Array& b) { return combine(id, a, b); };
  // Updates sorted by target (stably: index order kept within a target; dropped ones last,
  // under key n), combined by a segmented scan: a segment restarts where the key changes.
  Array p = astype(positions, DType::kI64);
  p = where(less(p, 0), p + scalar(static_cast<double>(n), DType::kI64), p);
  const Array none = full_like(p, static_cast<double>(n));
  Array key = where(logical_and(greater_equal(p, 0), less(p, none)), p, none);
  Array order = argsort(key);
  Array ks = take(key, order), us = take(updates, order);
  Array changed = not_equal(slice_axis(ks, 0, 1, m), slice_axis(ks, 0, 0, m - 1));
  const Array yes = full({1}, 1, DType::kBool);
  Array start = concatenate({yes, changed}, 0), end = concatenate({changed, yes}, 0);
  std::vector<Array> seg = associative_scan(
      [&op](const std::vector<Array>& a, const std::vector<Array>& b) {
        return std::vector<Array>{where(b[1], b[0], op(a[0], b[0])), logical_or(a[1], b[1])};
      },
      std::vector<Array>{us, start});
  // Each segment's last element carries its combined updates; it alone writes x's element.
  Array last = logical_and(end, less(ks, none));
  Array target = where(last, ks, full_like(ks, -static_cast<double>(n) - 1));
  Array current = take(x, minimum(ks, full_like(ks, static_cast<double>(n - 1))));
  return scatter_combine(x, target, op(current, seg[0]), PrimitiveId::kScatter);
}

}  // namespace graft::detail
