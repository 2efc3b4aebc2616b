// RMSNorm and LayerNorm over the last axis. Statistics and the affine step are computed in
// f32 whatever the input dtype; the result has the input's dtype (the mixed-precision rule:
// norms in f32). Parameters are [dim].
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"
#include "core/tree/tree.h"

namespace graft::nn {

// x / sqrt(mean(x^2) + eps) * weight (Llama's RMSNorm).
Array rms_norm(const Array& x, const Array& weight, double eps = 1e-5);
// (x - mean) / sqrt(var + eps) * weight + bias (biased variance, like torch / flax).
Array layer_norm(const Array& x, const Array& weight, const std::optional<Array>& bias,
                 double eps = 1e-5);

struct RMSNorm {
  Array weight;  // [dim], ones at init
  Array operator()(const Array& x, double eps = 1e-5) const { return rms_norm(x, weight, eps); }
};
struct LayerNorm {
  Array weight;               // [dim], ones at init
  std::optional<Array> bias;  // [dim], zeros at init
  Array operator()(const Array& x, double eps = 1e-5) const {
    return layer_norm(x, weight, bias, eps);
  }
};

RMSNorm rms_norm_init(int64_t dim, DType dtype = DType::kF32);
LayerNorm layer_norm_init(int64_t dim, bool bias = true, DType dtype = DType::kF32);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::RMSNorm, weight);
GRAFT_TREE(graft::nn::LayerNorm, weight, bias);
