#include "transforms/control_flow.h"

namespace graft::detail {

std::pair<Array, Array> fori_bounds(const Array& lower, const Array& upper) {
  for (const Array* b : {&lower, &upper}) {
    if (!b->valid()) fail("fori_loop", "a bound is an empty Array handle");
    if (b->ndim() != 0 || !is_integral(b->dtype())) {
      fail("fori_loop", "lower and upper must be integer scalars, got ", b->aval().str());
    }
  }
  DType lo = lower.dtype(), hi = upper.dtype();
  if (lo == hi) return {lower, upper};
  bool lw = lower.aval().weak, hw = upper.aval().weak;
  if (lw && !hw) return {astype(lower, hi), upper};
  if (hw && !lw) return {lower, astype(upper, lo)};
  fail("fori_loop", "lower and upper arguments to fori_loop must have equal types, got ",
       dtype_name(lo), " and ", dtype_name(hi));
}

}  // namespace graft::detail
