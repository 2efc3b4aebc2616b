// The SwiGLU feed-forward block of Llama: w2(silu(x w1) * (x w3)). w1 is the gate, w3 the
// up projection, w2 the down projection (HF names: gate_proj, up_proj, down_proj).
#pragma once

#include <cstdint>

#include "core/array.h"
#include "core/tree/tree.h"

namespace graft::nn {

struct SwiGLU {
  Array w1;  // [dim, hidden] gate
  Array w2;  // [hidden, dim] down
  Array w3;  // [dim, hidden] up

  // x [..., dim] -> [..., dim]; weights are cast to x's dtype (bf16 compute).
  Array operator()(const Array& x) const;
};

// normal(0, stddev) for all three, w2 additionally times out_scale (Llama scales output
// projections by 1 / sqrt(2 * n_layers)).
SwiGLU swiglu_init(const Array& key, int64_t dim, int64_t hidden, double stddev = 0.02,
                   double out_scale = 1.0, DType dtype = DType::kF32);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::SwiGLU, w1, w2, w3);
