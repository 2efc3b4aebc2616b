// Internals of fused_elementwise's CPU kernel (fusion_kernels.cc): what one step computes on
// a tile of values (fusion_kernels_steps.cc).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/primitives/fusion.h"

namespace graft::cpu::fusion {

enum class Kind { kF32, kF64, kBool };  // what a slot holds in a tile (f16/bf16: f32)
inline Kind kind_of(DType d) {
  return d == DType::kF64 ? Kind::kF64 : (d == DType::kBool ? Kind::kBool : Kind::kF32);
}

// Evaluates step `s` on `n` elements: ptr[i] points at slot i's values (of kinds[i]), `dst`
// receives the step's values (of `kind`); dst may be one of the step's operands. Tiles start
// at multiples of 16 elements from the array's start and are 64-byte aligned, so vectorized
// paths cover the same elements as the unfused kernels' (and give the same bits).
void run_step(const FusedStep& s, const Kind* kinds, void* const* ptr, void* dst, Kind kind,
              int64_t n);

}  // namespace graft::cpu::fusion
