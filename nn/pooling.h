// Pooling as flax.linen has it (pool, avg_pool, max_pool, min_pool): windows over the spatial
// dims of channels-last inputs [batch, spatial..., features] (or [spatial..., features],
// unbatched), built on lax.reduce_window (core/lax/convolution.h).
#pragma once

#include "core/array.h"
#include "core/ops.h"

namespace graft::nn {

// flax.linen.max_pool(inputs, window_shape, strides=None, padding="VALID"): window_shape and
// strides (empty: all 1) have one entry per spatial dim; padding is "SAME" / "VALID" / one
// (lo, hi) pair per spatial dim.
Array max_pool(const Array& inputs, const Shape& window_shape, const Shape& strides = {},
               const WindowPadding& padding = "VALID");
Array min_pool(const Array& inputs, const Shape& window_shape, const Shape& strides = {},
               const WindowPadding& padding = "VALID");
// flax.linen.avg_pool: the window sum over the window size (count_include_pad=true), or over
// the number of input elements in the window (false).
Array avg_pool(const Array& inputs, const Shape& window_shape, const Shape& strides = {},
               const WindowPadding& padding = "VALID", bool count_include_pad = true);

}  // namespace graft::nn
