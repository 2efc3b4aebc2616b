// GEMM through cuBLASLt on graft's row-major arrays.
//
//   c[b] = epilogue(alpha * op(a[b]) @ op(b[b]) + beta * c[b] (+ bias))   for b < batch
//
// op(a) is [m, k]: a is stored row-major as [m, k] (trans_a false) or [k, m] (trans_a true);
// op(b) is [k, n]: b is stored as [k, n] or [n, k] (trans_b). c is [m, n] row-major. Leading
// dims are the stored rows' strides in elements (kDense: the row length), batch strides are in
// elements (kDense: one stored matrix after the other; 0: the same matrix for every batch).
// The bias is a vector of n elements (one per output column, i.e. per output feature of
// x @ w), the same for every batch; relu / gelu (cuBLASLt's tanh approximation) apply after
// the bias.
//
// Row-major to cuBLASLt's column-major: a row-major [r, c] matrix is the column-major [c, r]
// matrix with the same leading dim, its transpose. So c^T = op(b)^T op(a)^T is computed: the
// column-major problem has m' = n, n' = m, its "A" is our b (transposed iff trans_b), its "B"
// our a (transposed iff trans_a), and its column-major D [n, m] is our row-major c. Nothing is
// copied; cuBLASLt's per-row bias (length m' = n) is our per-column bias.
//
// Types: a and b f32, f64, bf16 or f16 (the same), or fp8 (e4m3 / e5m2, not both e5m2) with
// optional device scale factors (float, one each); c any of f32 / bf16 / f16 (f64 with f64
// operands; never fp8) as cuBLASLt allows for the inputs. Accumulation is f32 (f64 for f64); f32
// operands use true f32 unless allow_tf32. fp8 needs cuBLASLt's "TN" layout, which here is
// trans_a false and trans_b true (a [m, k], b stored [n, k]).
//
// One cublasLtHandle per device (created on first use), the heuristic's best algorithm cached
// per description (and pointer alignments), a 32 MiB workspace per stream (from the caching
// allocator, kept for the process's life). Thread-safe. Enqueues on `stream`, never
// synchronizes. Errors: graft::Error "[cuda] ..." (bad description, no algorithm, a cuBLASLt
// failure). Built only with --config=cuda.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "core/dtype/dtype.h"

namespace graft::cuda {

// A failed cuBLASLt call: "[cuda] <call>: cuBLASLt error <code>: <cublasLtGetStatusString>".
void check(cublasStatus_t status, std::string_view call);

enum class Epilogue { kNone, kBias, kRelu, kGelu, kBiasRelu, kBiasGelu };

inline constexpr int64_t kDense = -1;

struct MatmulDesc {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int64_t lda = kDense, ldb = kDense, ldc = kDense;
  int64_t stride_a = kDense, stride_b = kDense, stride_c = kDense;
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F;
  bool allow_tf32 = false;
  Epilogue epilogue = Epilogue::kNone;
  std::optional<cudaDataType_t> bias_type;  // default: c_type
  // Host scalars, read when the call is enqueued (not part of the algorithm cache's key).
  double alpha = 1.0, beta = 0.0;
  // fp8 only: device pointers to one float each (null: 1).
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
};

// The cudaDataType of f32, f64, bf16, f16; graft::Error for others.
cudaDataType_t cuda_data_type(DType dtype);
// Bytes per element of the types MatmulDesc takes.
int64_t cuda_type_size(cudaDataType_t type);
// "batch 4, [64, 32] @ [32, 16]^T, bf16 x bf16 -> f32, bias(bf16)+gelu": for messages.
std::string describe(const MatmulDesc& desc);

// Enqueues the GEMM on `stream` (device `device`). `bias` is needed iff the epilogue has one.
// batch, m or n of 0: nothing to do. k must be >= 1 (a k = 0 product is the caller's zeros).
void matmul(const MatmulDesc& desc, const void* a, const void* b, void* c, const void* bias,
            int device, cudaStream_t stream);

// The bytes of workspace matmul gives cuBLASLt per stream.
inline constexpr size_t kMatmulWorkspaceBytes = size_t{32} << 20;

}  // namespace graft::cuda
