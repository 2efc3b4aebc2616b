// Complex reductions and ordering (the reduce primitives and sort take real values): prod,
// max and min as a pairwise tree over the reduced elements, and the lexicographic argsort.
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/ops_util.h"

namespace graft::detail {

Array complex_reduce(PrimitiveId id, const Array& z, const std::vector<int>& axes, bool keepdims) {
  if (axes.empty()) return z;
  // The reduced axes moved last and merged into one of n elements.
  std::vector<int> perm;
  Shape kept, out_keep = z.shape();
  int64_t n = 1;
  for (int d = 0; d < z.ndim(); ++d) {
    bool reduced = false;
    for (int a : axes) reduced = reduced || a == d;
    if (reduced) {
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
      Array c = id == PrimitiveId::kReduceProd  ? a * b
                : id == PrimitiveId::kReduceMax ? maximum(a, b)
                                                : minimum(a, b);
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

}  // namespace graft::detail
