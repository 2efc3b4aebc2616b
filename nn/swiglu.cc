#include "nn/swiglu.h"

#include "core/ops.h"
#include "core/random/random.h"
#include "nn/activations.h"
#include "nn/init.h"
#include "nn/linear.h"

namespace graft::nn {

Array SwiGLU::operator()(const Array& x) const {
  return dense(silu(dense(x, w1)) * dense(x, w3), w2);
}

SwiGLU swiglu_init(const Array& key, int64_t dim, int64_t hidden, double stddev, double out_scale,
                   DType dtype) {
  Array k = random::split(key, 3);
  return {normal_init(key_at(k, 0), {dim, hidden}, stddev, dtype),
          normal_init(key_at(k, 1), {hidden, dim}, stddev * out_scale, dtype),
          normal_init(key_at(k, 2), {dim, hidden}, stddev, dtype)};
}

}  // namespace graft::nn
