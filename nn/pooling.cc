#include "nn/pooling.h"

#include "core/error.h"

namespace graft::nn {

namespace {

using Reduce = Array (*)(const Array&, const Shape&, const Shape&, const WindowPadding&,
                         const Shape&, const Shape&);

// flax.linen.pool: the window and strides get 1 for the batch and feature dims (a batch dim
// is added to unbatched inputs and removed again).
Array pool(const char* op, const Array& x, Reduce reduce, const Shape& window,
           const Shape& strides, const WindowPadding& padding) {
  const int64_t n = static_cast<int64_t>(window.size());
  if (x.ndim() != n + 1 && x.ndim() != n + 2) {
    fail(op, "inputs ", x.aval().str(), " need ", n, " spatial dims after an optional batch dim ",
         "and before the feature dim (window_shape has ", n, " entries)");
  }
  if (!strides.empty() && strides.size() != window.size()) {
    fail(op, "strides need one entry per spatial dim (", n, "), got ", strides.size());
  }
  const bool batched = x.ndim() == n + 2;
  Array xb = batched ? x : expand_dims(x, {0});
  Shape w = {1}, s = {1};
  for (int64_t i = 0; i < n; ++i) {
    w.push_back(window[i]);
    s.push_back(strides.empty() ? 1 : strides[i]);
  }
  w.push_back(1);
  s.push_back(1);
  WindowPadding pad = padding;
  if (padding.name.empty()) {
    if (padding.pairs.size() != window.size()) {
      fail(op, "padding needs one (lo, hi) pair per spatial dim (", n, "), got ",
           padding.pairs.size());
    }
    pad.pairs.insert(pad.pairs.begin(), {0, 0});
    pad.pairs.push_back({0, 0});
  }
  Array y = reduce(xb, w, s, pad, {}, {});
  return batched ? y : squeeze(y, {0});
}

}  // namespace

Array max_pool(const Array& inputs, const Shape& window_shape, const Shape& strides,
               const WindowPadding& padding) {
  return pool("max_pool", inputs, reduce_window_max, window_shape, strides, padding);
}

Array min_pool(const Array& inputs, const Shape& window_shape, const Shape& strides,
               const WindowPadding& padding) {
  return pool("min_pool", inputs, reduce_window_min, window_shape, strides, padding);
}

Array avg_pool(const Array& inputs, const Shape& window_shape, const Shape& strides,
               const WindowPadding& padding, bool count_include_pad) {
  Array sums = pool("avg_pool", inputs, reduce_window_sum, window_shape, strides, padding);
  if (count_include_pad) {
    return sums / static_cast<double>(numel(window_shape));
  }
  // Divide by how many real elements each window saw: the same pooling over ones.
  Shape ones_shape = inputs.shape();
  Array counts =
      pool("avg_pool", ones(ones_shape, inputs.dtype()), reduce_window_sum, window_shape, strides,
           padding);
  return sums / counts;
}

}  // namespace graft::nn
