// f32 log, log1p, erf and erf_inv computed exactly as XLA:CPU computes them (jaxlib 0.10.2
// on x86-64 with FMA), so graft's normal / truncated_normal / gumbel draws match JAX bit for
// bit. tools/jax_random_algorithms.md (section 14) gives the algorithms and how they were
// recovered; each is accurate to a few ulp (erf_inv: Giles' approximation, ~1e-6 relative).
// Contract: in and out may alias; n >= 0; single-threaded (callers split the range).
#pragma once

#include <cstdint>

namespace graft::ew {

void xla_log_f32(const float* in, float* out, int64_t n);
void xla_log1p_f32(const float* in, float* out, int64_t n);
void xla_erf_f32(const float* in, float* out, int64_t n);
void xla_erf_inv_f32(const float* in, float* out, int64_t n);

}  // namespace graft::ew
