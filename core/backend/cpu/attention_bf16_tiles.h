// flash_attention / flash_attention_grad tasks for bf16 q, k, v whose tile products run on
// AVX512-BF16's vdpbf16ps (attention_bf16_tiles.cc): twice the multiply-adds per instruction of
// the f32 tiles, with the probability tiles p and ds rounded to bf16 before their products.
// The tasks are attention_kernels.cc's: forward task i = (b * KV + j) * n_qtiles + qtile,
// backward task i = b * KV + j.
#pragma once

#include <cstdint>

#include "core/backend/cpu/attention_tiles.h"
#include "core/dtype/half.h"

namespace graft::cpu::flash {

// Whether this CPU has AVX512-BF16 (and the build these tiles) and `g`'s query tiles start at
// even rows (block_q * G even), which the backward pass's row pairs need.
bool bf16_tiles_available(const Geometry& g);

// g from geometry<float>. lse is f32.
void forward_bf16_tiles(const Geometry& g, const bf16* q, const bf16* k, const bf16* v, bf16* o,
                        float* lse, int64_t i0, int64_t i1);
// a: bf16 q, k, v, o, do, dq, dk, dv; f32 lse, dlse.
void backward_bf16_tiles(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1);

}  // namespace graft::cpu::flash
