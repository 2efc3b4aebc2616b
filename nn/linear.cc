#include "nn/linear.h"

#include "core/error.h"
#include "core/ops.h"
#include "nn/init.h"

namespace graft::nn {

Array dense(const Array& x, const Array& w) {
  if (w.ndim() != 2) fail("dense", "weight must be [in, out], got ", shape_str(w.shape()));
  if (x.ndim() < 1 || x.shape().back() != w.shape()[0]) {
    fail("dense", "input ", shape_str(x.shape()), " does not match weight ", shape_str(w.shape()));
  }
  Array wc = w.dtype() == x.dtype() ? w : astype(w, x.dtype());
  return dot_general(x, wc, {{x.ndim() - 1}, {0}, {}, {}});
}

Array Linear::operator()(const Array& x) const {
  Array y = dense(x, w);
  if (b) y = y + astype(*b, y.dtype());
  return y;
}

Linear linear_init(const Array& key, int64_t in, int64_t out, bool bias, double stddev,
                   DType dtype) {
  Linear l{normal_init(key, {in, out}, stddev, dtype), std::nullopt};
  if (bias) l.b = zeros({out}, dtype);
  return l;
}

}  // namespace graft::nn
