// Bulk conversions between f32 and bf16, with AVX2 integer ops: the same bits as bf16's
// scalar from_float / to_float (core/dtype/half.h: round to nearest even, NaN quieted keeping its
// payload's top bits), at memory speed. GCC's -O2 cost model leaves the scalar loops
// unvectorized (about 3x slower), and every bf16 kernel widens its inputs and rounds its
// outputs, so these sit under the convert kernel, the eager elementwise kernels and the
// fused groups' interpreter.
#pragma once

#include <cstdint>

#include "core/dtype/half.h"

namespace graft::cpu {

// y[i] = bf16(x[i]) for i < n.
void round_to_bf16(const float* x, bf16* y, int64_t n);

// y[i] = float(x[i]) for i < n (exact).
void widen_bf16(const bf16* x, float* y, int64_t n);

// v[i] = float(bf16(v[i])): the value an f32 takes when stored as bf16 and read back.
void round_through_bf16(float* v, int64_t n);

}  // namespace graft::cpu
