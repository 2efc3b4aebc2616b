#include "nn/norm.h"

#include "core/error.h"
#include "core/ops.h"

namespace graft::nn {
namespace {

void check(const char* op, const Array& x, const Array& weight) {
  if (x.ndim() < 1 || weight.ndim() != 1 || weight.shape()[0] != x.shape().back()) {
    fail(op, "weight ", shape_str(weight.shape()), " does not match the last axis of ",
         shape_str(x.shape()));
  }
  if (!is_floating(x.dtype())) fail(op, "input must be floating, got ", dtype_name(x.dtype()));
}

Array f32(const Array& a) { return a.dtype() == DType::kF32 ? a : astype(a, DType::kF32); }

}  // namespace

Array rms_norm(const Array& x, const Array& weight, double eps) {
  check("rms_norm", x, weight);
  Array xf = f32(x);
  Array y = xf * rsqrt(mean(square(xf), {-1}, true) + eps) * f32(weight);
  return astype(y, x.dtype());
}

Array layer_norm(const Array& x, const Array& weight, const std::optional<Array>& bias,
                 double eps) {
  check("layer_norm", x, weight);
  if (bias) check("layer_norm", x, *bias);
  Array xf = f32(x);
  Array centered = xf - mean(xf, {-1}, true);
  Array y = centered * rsqrt(mean(square(centered), {-1}, true) + eps) * f32(weight);
  if (bias) y = y + f32(*bias);
  return astype(y, x.dtype());
}

RMSNorm rms_norm_init(int64_t dim, DType dtype) { return {ones({dim}, dtype)}; }
LayerNorm layer_norm_init(int64_t dim, bool bias, DType dtype) {
  LayerNorm n{ones({dim}, dtype), std::nullopt};
  if (bias) n.bias = zeros({dim}, dtype);
  return n;
}

}  // namespace graft::nn
