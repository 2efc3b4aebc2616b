// Launchers of the CUDA kernels of real, imag, complex and conj (core/primitives/complex.h),
// the GPU twins of core/backend/cpu/complex_kernels.cc. Each enqueues one map kernel on
// `stream`; pointers are device memory of n dense elements. Errors (a dtype that is not c64 /
// c128, a failed launch) throw graft::Error. Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype/dtype.h"

namespace graft::cuda {

enum class ComplexPart { kReal, kImag, kConj };

// y = real(x) / imag(x) (f32 for c64, f64 for c128) or conj(x) (x's dtype); x has `dtype`.
void launch_complex_part(ComplexPart part, DType dtype, const void* x, void* y, int64_t n,
                         cudaStream_t stream);

// y = re + i im: y has the complex `dtype`, re and im its part dtype.
void launch_make_complex(DType dtype, const void* re, const void* im, void* y, int64_t n,
                         cudaStream_t stream);

}  // namespace graft::cuda
