// Batched GEMM through oneDNN's matmul primitive, with a cache of created primitives.
//
// C[b] = A[b] @ B[b] for b < batch, with A [batch, m, k] and B [batch, k, n] given by
// element strides (any strides oneDNN accepts: in practice one of each operand's two inner
// strides is 1) and C dense row-major [batch, m, n]. Inputs are f32 or bf16 (both the same);
// the output is f32 or bf16 (bf16 inputs accumulate in f32). Thread-safe: the cache is
// locked, and a cached primitive runs with the calling thread's own stream and scratchpad
// (onednn_exec.h), so any number of threads may run the same shape at once.
#pragma once

#include <array>
#include <cstdint>

#include "core/dtype/dtype.h"

namespace graft::cpu {

struct GemmDesc {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  std::array<int64_t, 3> a_strides{}, b_strides{};  // in elements: batch, row, column
  DType in = DType::kF32;                           // f32 or bf16
  DType out = DType::kF32;                          // f32 or bf16
  bool operator==(const GemmDesc&) const = default;
};

// Runs the GEMM; returns false (having written nothing) when oneDNN has no implementation
// for this descriptor, so the caller can fall back. Sizes must all be >= 1.
bool onednn_matmul(const GemmDesc& d, const void* a, const void* b, void* c);

// Primitive-cache counters, for tests and benchmarks.
struct GemmCacheStats {
  int64_t hits = 0, misses = 0, size = 0, capacity = 0;
};
GemmCacheStats onednn_cache_stats();

// Turns the oneDNN path off (onednn_matmul then returns false), so tests can exercise the
// Eigen fallback. Process-wide; on by default.
void set_onednn_enabled(bool enabled);
bool onednn_enabled();  // for other oneDNN users (ragged_dot) that honour the switch

}  // namespace graft::cpu
