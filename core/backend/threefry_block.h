// The Threefry-2x32 block function with 20 rounds (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3", SC11), in the order JAX's threefry2x32_p lowers it: one definition for
// the CPU kernel (core/backend/cpu/random_kernels.cc) and the CUDA one
// (core/backend/cuda/kernels/random.cu), so both give JAX's bits. Plain C++ with no
// includes beyond <cstdint>, so nvcc compiles it too.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GRAFT_THREEFRY_INLINE __host__ __device__ __forceinline__
#else
#define GRAFT_THREEFRY_INLINE __attribute__((always_inline)) inline
#endif

namespace graft {

GRAFT_THREEFRY_INLINE uint32_t threefry_rotl(uint32_t v, int r) {
  return (v << r) | (v >> (32 - r));
}

// Encrypts the counter pair (x0, x1) in place under the key (k0, k1).
GRAFT_THREEFRY_INLINE void threefry2x32_block(uint32_t k0, uint32_t k1, uint32_t& x0,
                                              uint32_t& x1) {
  const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
  uint32_t a = x0 + k0, b = x1 + k1;
#define GRAFT_ROUND(r) \
  a += b;              \
  b = threefry_rotl(b, r) ^ a;
#define GRAFT_ROUNDS_0 GRAFT_ROUND(13) GRAFT_ROUND(15) GRAFT_ROUND(26) GRAFT_ROUND(6)
#define GRAFT_ROUNDS_1 GRAFT_ROUND(17) GRAFT_ROUND(29) GRAFT_ROUND(16) GRAFT_ROUND(24)
  GRAFT_ROUNDS_0
  a += k1;
  b += k2 + 1u;
  GRAFT_ROUNDS_1
  a += k2;
  b += k0 + 2u;
  GRAFT_ROUNDS_0
  a += k0;
  b += k1 + 3u;
  GRAFT_ROUNDS_1
  a += k1;
  b += k2 + 4u;
  GRAFT_ROUNDS_0
  a += k2;
  b += k0 + 5u;
#undef GRAFT_ROUNDS_1
#undef GRAFT_ROUNDS_0
#undef GRAFT_ROUND
  x0 = a;
  x1 = b;
}

}  // namespace graft

#undef GRAFT_THREEFRY_INLINE
