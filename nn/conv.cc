#include "nn/conv.h"

#include "core/error.h"
#include "nn/init.h"

namespace graft::nn {

Array Conv::operator()(const Array& x, const ConvSpec& spec) const {
  const int64_t n = static_cast<int64_t>(spec.kernel_size.size());
  if (kernel.ndim() != n + 2) {
    fail("Conv", "kernel ", kernel.aval().str(), " does not have ", n + 2,
         " dims (kernel_size has ", n, ")");
  }
  if (x.ndim() != n + 1 && x.ndim() != n + 2) {
    fail("Conv", "input ", x.aval().str(), " needs ", n,
         " spatial dims after an optional batch dim and before the feature dim");
  }
  const bool batched = x.ndim() == n + 2;
  Array xb = batched ? x : expand_dims(x, {0});
  // Channels last (flax's _conv_dimension_numbers): lhs / out (0, n+1, 1..n), kernel
  // (n+1, n, 0..n-1).
  std::vector<int64_t> io = {0, n + 1}, k = {n + 1, n};
  for (int64_t i = 0; i < n; ++i) {
    io.push_back(i + 1);
    k.push_back(i);
  }
  Array w = kernel.dtype() == x.dtype() ? kernel : astype(kernel, x.dtype());
  Array y = conv_general_dilated(xb, w, spec.strides, spec.padding, spec.input_dilation,
                                 spec.kernel_dilation, ConvDimensionNumbers{io, k, io},
                                 spec.feature_group_count);
  if (bias) y = y + astype(*bias, y.dtype());
  return batched ? y : squeeze(y, {0});
}

Conv conv_init(const Array& key, int64_t in_features, const ConvSpec& spec, DType dtype) {
  if (spec.features < 1 || spec.feature_group_count < 1 ||
      in_features % spec.feature_group_count != 0) {
    fail("Conv", "features (", spec.features, ") must be positive and in_features (",
         in_features, ") a multiple of feature_group_count (", spec.feature_group_count, ")");
  }
  Shape shape = spec.kernel_size;
  shape.push_back(in_features / spec.feature_group_count);
  shape.push_back(spec.features);
  Conv c{lecun_normal(key, shape, dtype), std::nullopt};
  if (spec.use_bias) c.bias = zeros({spec.features}, dtype);
  return c;
}

}  // namespace graft::nn
