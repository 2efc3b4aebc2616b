// CUDA kernels of the linalg family: dot_general here, ragged_dot in ragged_dot_kernel.cc.
//
// dot_general is a batched GEMM [B, M, K] x [B, K, N] -> dense [B, M, N] (operand.h groups
// the dims as the CPU kernel does). An operand whose groups each form one strided dim, with
// the row or the col dim contiguous, goes to cuBLASLt as is (a strided batched matrix,
// transposed or not); any other operand is first gathered into a dense copy in the call's
// scratch memory. Dtypes, matching the CPU's results:
//  - f16 / bf16 operands into their own dtype or f32, f32 into f32, f64 into f64: straight
//    cuBLASLt (f32 accumulation; f32 without TF32, as precise as the CPU's).
//  - other float combinations: the GEMM runs in the operand dtype (f64 when the output is
//    f64), into f32 / f64 scratch, converted to the output dtype after; integer operands with
//    a float output are converted to f32 (f64) first.
//  - integers into integers: a plain device kernel in the output dtype, wrapping like the CPU.
//  - fp8 operands: widened to bf16 in scratch (every fp8 value is exact in bf16), then the bf16
//    GEMM with f32 accumulation; an fp8 output is rounded from the f32 result, as the CPU.
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/elementwise.h"
#include "core/backend/cuda/linalg/dot_epilogue.h"
#include "core/backend/cuda/linalg/linalg_device.h"
#include "core/backend/cuda/linalg/operand.h"
#include "core/backend/cuda/runtime/blaslt_matmul.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/primitives/linalg.h"

namespace graft::cuda {
namespace {

using linalg::Side;
using linalg::Strides3;

// Offsets into the call's one scratch block (Call::scratch is asked once per call), each
// 256-byte aligned as cuBLASLt's fastest kernels want.
struct ScratchPlan {
  size_t total = 0;
  size_t add(size_t bytes) {
    size_t at = total;
    total += (bytes + 255) / 256 * 256;
    return at;
  }
};

// Whether cuBLASLt writes output `out` from operands `in` directly.
bool blas_output(DType in, DType out) {
  switch (in) {
    case DType::kF16:
    case DType::kBF16:
      return out == in || out == DType::kF32;
    case DType::kF32:
      return out == DType::kF32;
    case DType::kF64:
      return out == DType::kF64;
    default:
      return false;
  }
}

// One operand's plan: used in place (view set) or gathered into scratch at `offset`.
struct Operand {
  std::optional<Strides3> view;
  size_t offset = 0;
};

Operand plan_operand(const Side& s, DType dtype, bool strided_ok, ScratchPlan& scratch) {
  Operand op;
  if (s.dtype == dtype) {
    op.view = linalg::blas_view(s);
    if (op.view && !strided_ok && *op.view != linalg::dense_strides(s)) op.view.reset();
  }
  if (!op.view) op.offset = scratch.add(numel(s.shape) * dtype_size(dtype));
  return op;
}

// The operand's address and strides, gathering it first if planned so.
const void* materialize(const Side& s, const Operand& op, DType dtype, char* scratch,
                        cudaStream_t stream, Strides3* strides) {
  if (op.view) {
    *strides = *op.view;
    return s.data;
  }
  linalg::gather(s, dtype, scratch + op.offset, stream);
  *strides = linalg::dense_strides(s);
  return scratch + op.offset;
}

using Activation = MatmulEpilogue::Activation;

// The GEMM, finished by cuBLASLt's epilogue when `bias` or `act` asks for one.
void dot_general(Call& call, const void* bias, Activation act) {
  const auto& p = call.params<DotGeneral>();
  const DotDims& dd = p.dims();
  const DType od = call.out_aval().dtype;
  const int64_t out_bytes = numel(call.out_aval().shape) * dtype_size(od);
  if (out_bytes == 0) return;
  void* out = call.out_raw();
  cudaStream_t stream = call.stream();
  Side l = linalg::make_side(call.in_raw(0), call.in_aval(0), dd.lhs_batch, dd.lhs_contract,
                             false);  // [B, M, K]
  Side r = linalg::make_side(call.in_raw(1), call.in_aval(1), dd.rhs_batch, dd.rhs_contract,
                             true);  // [B, K, N]
  const int64_t B = l.size[0], M = l.size[1], K = l.size[2], N = r.size[2];
  if (K == 0 && (bias != nullptr || act != Activation::kNone)) {
    graft::fail("dot_general", "a GEMM epilogue needs a contraction of size 1 or more");
  }
  if (K == 0) {  // all-zero bits are zero in every numeric dtype
    check(cudaMemsetAsync(out, 0, out_bytes, stream), "cudaMemsetAsync");
    return;
  }
  const DType in = l.dtype;

  if (!is_floating(in) && !is_floating(od)) {  // integers accumulate (and wrap) in od
    ScratchPlan plan;
    Operand a = plan_operand(l, od, false, plan), b = plan_operand(r, od, false, plan);
    char* scratch = plan.total ? static_cast<char*>(call.scratch(plan.total)) : nullptr;
    Strides3 sa, sb;
    const void* pa = materialize(l, a, od, scratch, stream, &sa);
    const void* pb = materialize(r, b, od, scratch, stream, &sb);
    if (!linalg::integer_gemm(static_cast<int>(od), B, M, K, N, pa, pb, out, stream)) {
      graft::fail("dot_general", "has no CUDA integer GEMM into ", dtype_name(od));
    }
    check(cudaGetLastError(), "integer_gemm");
    return;
  }

  ScratchPlan plan;
  // fp8 operands become bf16 copies in their own layout (the sides' strides stay valid).
  const Side fp8_l = l, fp8_r = r;
  const bool widen_l = is_float8(l.dtype), widen_r = is_float8(r.dtype);
  const size_t wide_l = widen_l ? plan.add(numel(l.shape) * dtype_size(DType::kBF16)) : 0;
  const size_t wide_r = widen_r ? plan.add(numel(r.shape) * dtype_size(DType::kBF16)) : 0;
  if (widen_l) l.dtype = DType::kBF16;
  if (widen_r) r.dtype = DType::kBF16;
  DType gemm_in = widen_l || widen_r ? DType::kBF16 : in;
  if (!is_floating(in)) gemm_in = od == DType::kF64 ? DType::kF64 : DType::kF32;
  if (od == DType::kF64) gemm_in = DType::kF64;
  const DType gemm_out = blas_output(gemm_in, od) ? od
                         : gemm_in == DType::kF64 ? DType::kF64
                                                  : DType::kF32;
  Operand a = plan_operand(l, gemm_in, true, plan), b = plan_operand(r, gemm_in, true, plan);
  const size_t c_offset = gemm_out != od ? plan.add(B * M * N * dtype_size(gemm_out)) : 0;
  char* scratch = plan.total ? static_cast<char*>(call.scratch(plan.total)) : nullptr;
  if (widen_l) {
    l.data = scratch + wide_l;
    launch_convert(fp8_l.dtype, DType::kBF16, fp8_l.data, scratch + wide_l, numel(l.shape), stream);
  }
  if (widen_r) {
    r.data = scratch + wide_r;
    launch_convert(fp8_r.dtype, DType::kBF16, fp8_r.data, scratch + wide_r, numel(r.shape), stream);
  }
  Strides3 sa, sb;
  const void* pa = materialize(l, a, gemm_in, scratch, stream, &sa);
  const void* pb = materialize(r, b, gemm_in, scratch, stream, &sb);
  if (!a.view || !b.view) check(cudaGetLastError(), "dot_general gather");
  void* c = gemm_out != od ? scratch + c_offset : out;

  MatmulDesc desc;
  desc.batch = B;
  desc.m = M;
  desc.n = N;
  desc.k = K;
  // A contiguous col stride: row-major, ld = the row stride; else column-major (transposed).
  desc.trans_a = sa[2] != 1;
  desc.lda = desc.trans_a ? sa[2] : sa[1];
  desc.stride_a = sa[0];
  desc.trans_b = sb[2] != 1;
  desc.ldb = desc.trans_b ? sb[2] : sb[1];
  desc.stride_b = sb[0];
  desc.a_type = desc.b_type = cuda_data_type(gemm_in);
  desc.c_type = cuda_data_type(gemm_out);
  const bool epilogue = bias != nullptr || act != Activation::kNone;
  if (epilogue) {
    if (B != 1 || gemm_in != in || gemm_out != od || od == DType::kF64) {
      graft::fail("dot_general",
                  "a GEMM epilogue needs one unbatched f32 / f16 / bf16 product, got ",
                  describe(desc));
    }
    const bool relu = act == Activation::kRelu, gelu = act == Activation::kGelu;
    desc.epilogue = bias == nullptr ? (relu ? Epilogue::kRelu : Epilogue::kGelu)
                    : relu          ? Epilogue::kBiasRelu
                    : gelu          ? Epilogue::kBiasGelu
                                    : Epilogue::kBias;
  }
  matmul(desc, pa, pb, c, bias, call.device(), stream);
  if (gemm_out != od && is_float8(od)) {
    launch_convert(gemm_out, od, c, out, B * M * N, stream);
  } else if (gemm_out != od) {
    linalg::convert(c, gemm_out, out, od, B * M * N, stream);
    check(cudaGetLastError(), "dot_general convert");
  }
}

void dot_general_kernel(Call& call) { dot_general(call, nullptr, Activation::kNone); }

}  // namespace

void dot_general_epilogue(Call& call, const void* bias, Activation activation) {
  dot_general(call, bias, activation);
}

void register_ragged_dot_kernel(KernelTable& table);  // ragged_dot_kernel.cc

void register_linalg_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kDotGeneral)] = &dot_general_kernel;
  register_ragged_dot_kernel(table);
}

}  // namespace graft::cuda
