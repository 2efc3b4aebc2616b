// device_exact.cuh compiled for the host, so tests check the CUDA kernels' exact helpers
// (16-bit float rounding, converts, integer and NaN semantics) against graft's CPU code bit for
// bit on a machine without a GPU: the text is the one cuda_source.cc embeds in every kernel,
// with the bit casts done by std::bit_cast instead of CUDA's intrinsics.
//
// In its own top-level namespace: the helpers call the C math functions (sqrtf, floor, ...)
// unqualified, which graft's own sqrt / floor on Arrays would hide inside namespace graft.
#pragma once

#include <math.h>

#include <bit>
#include <cmath>

namespace graft_cuda_device {

#define GRAFT_FN static inline
GRAFT_FN unsigned int g_f2u(float x) { return std::bit_cast<unsigned int>(x); }
GRAFT_FN float g_u2f(unsigned int u) { return std::bit_cast<float>(u); }
GRAFT_FN unsigned long long g_d2u(double x) { return std::bit_cast<unsigned long long>(x); }
GRAFT_FN double g_u2d(unsigned long long u) { return std::bit_cast<double>(u); }
#include "core/backend/cuda/fusion/device_exact.cuh"
#undef GRAFT_FN

}  // namespace graft_cuda_device
