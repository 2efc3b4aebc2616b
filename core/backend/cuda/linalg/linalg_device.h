// The linalg family's own device kernels (linalg_device.cu), for what cuBLASLt does not do:
// gathering a strided operand into a dense one (with a dtype conversion), and integer GEMM.
// Plain types only, so the .cu file needs no graft header: element types are graft::DType
// values as ints (linalg_kernels.cc checks the numbering). Enqueued on `stream`; errors of the
// launch are reported by the caller's next check. Built only with --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graft::cuda::linalg {

inline constexpr int kMaxGatherRank = 8;

// dst[i] (dense, in row-major order of `shape`) = convert(src[sum_d idx_d * src_strides[d]]),
// for the `rank` <= kMaxGatherRank dims (strides in elements). Types: u8, u32, i32, i64, f16,
// bf16, f32, f64; a same-type gather also any other but c128. Integers convert modulo 2^bits,
// halves through float. Returns false, enqueuing nothing, for other types.
bool gather_convert(const void* src, int src_type, void* dst, int dst_type, int rank,
                    const int64_t* shape, const int64_t* src_strides, cudaStream_t stream);

// c[b] = a[b] @ b[b] for dense row-major a [batch, m, k], b [batch, k, n], c [batch, m, n] of
// integer type `type` (u8, u32, i32, i64), wrapping like the CPU's (unsigned arithmetic).
// Returns false, enqueuing nothing, for another type.
bool integer_gemm(int type, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                  const void* b, void* c, cudaStream_t stream);

}  // namespace graft::cuda::linalg
