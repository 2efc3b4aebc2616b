// A dense layer: y = x w (+ b), w of shape [in, out] (the layout JAX/Flax use; HF/PyTorch
// weights are [out, in] and import transposed).
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"
#include "core/tree/tree.h"

namespace graft::nn {

struct Linear {
  Array w;                 // [in, out]
  std::optional<Array> b;  // [out]

  // x [..., in] -> [..., out]. w and b are cast to x's dtype first (mixed precision: f32
  // params, bf16 activations, bf16 matmul).
  Array operator()(const Array& x) const;
};

// w ~ normal(0, stddev); b = 0 when `bias`.
Linear linear_init(const Array& key, int64_t in, int64_t out, bool bias = false,
                   double stddev = 0.02, DType dtype = DType::kF32);

// x [..., in] @ w [in, out] with w cast to x's dtype (so bf16 activations use bf16 matmuls).
Array dense(const Array& x, const Array& w);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::Linear, w, b);
