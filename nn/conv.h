// A convolution layer like flax.linen.Conv: channels-last inputs [batch, spatial..., in]
// (or unbatched [spatial..., in]), kernel [kernel_size..., in / feature_group_count,
// features] (flax's layout), optional bias [features]. The layer's attributes are a
// ConvSpec given to init and to each call (the parameters alone are the pytree).
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"
#include "core/ops.h"
#include "core/tree/tree.h"

namespace graft::nn {

struct ConvSpec {
  int64_t features = 0;
  Shape kernel_size;            // one entry per spatial dim
  Shape strides = {};           // empty: all 1
  WindowPadding padding = "SAME";  // "SAME", "SAME_LOWER", "VALID" or (lo, hi) pairs
  Shape input_dilation = {};    // lhs dilation; empty: all 1
  Shape kernel_dilation = {};   // rhs dilation; empty: all 1
  int64_t feature_group_count = 1;
  bool use_bias = true;
};

struct Conv {
  Array kernel;               // [kernel_size..., in / groups, features]
  std::optional<Array> bias;  // [features]

  // x [batch, spatial..., in] -> [batch, spatial'..., features]; the parameters are cast to
  // x's dtype first (f32 params, bf16 activations).
  Array operator()(const Array& x, const ConvSpec& spec) const;
};

// flax's defaults: kernel ~ lecun_normal (fan-in = in / groups * window size), bias 0.
Conv conv_init(const Array& key, int64_t in_features, const ConvSpec& spec,
               DType dtype = DType::kF32);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::Conv, kernel, bias);
