// CPU kernels of the linalg family: dot_general (ragged_dot: ragged_dot_kernel.cc).
//
// Every dot_general is a batched GEMM [B, M, K] x [B, K, N] -> [B, M, N]: the batch dims,
// free dims and contracting dims of each operand form three groups. The output is always
// dense [B, M, N]. An operand whose groups are each laid out as one strided dim, with the
// row or the column dim contiguous, is handed to oneDNN as is (strides, no copy); any other
// operand is first permuted into a dense [B, M, K] / [B, K, N] copy. f32 and bf16 go through
// oneDNN (bf16 accumulates in f32), f16 computes in f32, f64 and integers use Eigen / loops
// (integers wrap in the output dtype). If oneDNN has no implementation, Eigen takes over.
#include <Eigen/Core>
#include <array>
#include <cstring>
#include <optional>
#include <type_traits>

#include "core/backend/cpu/convert_elements.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/dot_operand.h"
#include "core/backend/cpu/onednn_matmul.h"
#include "core/dtype/convert.h"
#include "core/backend/cpu/parallel.h"
#include "core/primitives/linalg.h"

namespace graft::cpu {
namespace {

using Side = DotOperand;

Side make_side(const Call& call, int i, const std::vector<int>& batch,
               const std::vector<int>& contract, bool contract_is_rows) {
  return make_dot_operand(call.in_raw(i), call.in_aval(i), batch, contract, contract_is_rows);
}

// Copies the operand into dense [g0, g1, g2] order (same dtype), by element size.
template <typename E>
void permute_copy(const Side& s, E* dst) {
  std::vector<int> order;
  for (const auto& g : s.groups) order.insert(order.end(), g.begin(), g.end());
  const int rank = static_cast<int>(order.size());
  const E* src = static_cast<const E*>(s.data);
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  Shape shape(rank), st(rank);
  for (int i = 0; i < rank; ++i) {
    shape[i] = s.shape[order[i]];
    st[i] = s.strides[order[i]];
  }
  const int64_t inner = shape.back(), inner_stride = st.back();
  const int64_t rows = numel(s.shape) / inner;
  parallel_for(rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> idx(rank - 1);
    int64_t rem = r0, off = 0;
    for (int i = rank - 2; i >= 0; --i) {
      idx[i] = rem % shape[i];
      rem /= shape[i];
      off += idx[i] * st[i];
    }
    for (int64_t r = r0; r < r1; ++r) {
      E* d = dst + r * inner;
      const E* p = src + off;
      for (int64_t j = 0; j < inner; ++j) d[j] = p[j * inner_stride];
      for (int i = rank - 2; i >= 0; --i) {  // odometer step
        off += st[i];
        if (++idx[i] < shape[i]) break;
        off -= st[i] * shape[i];
        idx[i] = 0;
      }
    }
  });
}

// An operand ready for a GEMM: data of dtype `dtype` with strides; may own a copy.
struct View {
  const void* data;
  Strides3 strides;
  std::shared_ptr<Buffer> owned;
};

// The operand as `dtype`: no copy if the dtype matches and (allow_strided) its layout is a
// strided view or (otherwise) already dense; else a permuted and converted dense copy.
View prepare(const Side& s, DType dtype, bool allow_strided) {
  if (s.dtype == dtype) {
    auto st = gemm_view(s);
    if (st && (allow_strided || *st == dense_strides(s))) return {s.data, *st, nullptr};
  }
  const int64_t n = numel(s.shape);
  auto permuted = Buffer::make(n * dtype_size(s.dtype));
  switch (dtype_size(s.dtype)) {
    case 1:
      permute_copy(s, permuted->as<uint8_t>());
      break;
    case 2:
      permute_copy(s, permuted->as<uint16_t>());
      break;
    case 4:
      permute_copy(s, permuted->as<uint32_t>());
      break;
    default:
      permute_copy(s, permuted->as<uint64_t>());
      break;
  }
  if (s.dtype == dtype) return {permuted->data(), dense_strides(s), permuted};
  auto converted = Buffer::make(n * dtype_size(dtype));
  convert_elements(permuted->data(), s.dtype, converted->data(), dtype, n);
  return {converted->data(), dense_strides(s), converted};
}

struct Dims {
  int64_t b, m, k, n;
};

// Splits the B*M output rows over the thread pool; fn(b, row0, row1) does rows of batch b.
template <typename Fn>
void for_row_blocks(const Dims& d, Fn fn) {
  int64_t row_work = std::max<int64_t>(1, d.k * d.n);
  parallel_for(d.b * d.m, std::max<int64_t>(1, 262144 / row_work), [&](int64_t r0, int64_t r1) {
    while (r0 < r1) {
      int64_t b = r0 / d.m, i0 = r0 % d.m;
      int64_t i1 = std::min(d.m, i0 + (r1 - r0));
      fn(b, i0, i1);
      r0 += i1 - i0;
    }
  });
}

// Dense GEMM through Eigen (float types).
template <typename T>
void eigen_gemm(const Dims& d, const T* a, const T* b, T* c) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for_row_blocks(d, [&](int64_t bi, int64_t i0, int64_t i1) {
    Eigen::Map<const Mat> am(a + (bi * d.m + i0) * d.k, i1 - i0, d.k);
    Eigen::Map<const Mat> bm(b + bi * d.k * d.n, d.k, d.n);
    Eigen::Map<Mat> cm(c + (bi * d.m + i0) * d.n, i1 - i0, d.n);
    cm.noalias() = am * bm;
  });
}

// Dense integer GEMM, wrapping: unsigned arithmetic has no overflow UB.
template <typename T>
void int_gemm(const Dims& d, const T* a, const T* b, T* c) {
  using U = std::make_unsigned_t<T>;
  for_row_blocks(d, [&](int64_t bi, int64_t i0, int64_t i1) {
    const U* bb = reinterpret_cast<const U*>(b) + bi * d.k * d.n;
    for (int64_t i = i0; i < i1; ++i) {
      const U* ar = reinterpret_cast<const U*>(a) + (bi * d.m + i) * d.k;
      U* cr = reinterpret_cast<U*>(c) + (bi * d.m + i) * d.n;
      std::fill(cr, cr + d.n, U(0));
      for (int64_t p = 0; p < d.k; ++p) {
        const U av = ar[p];
        const U* br = bb + p * d.n;
        for (int64_t j = 0; j < d.n; ++j) cr[j] = static_cast<U>(cr[j] + av * br[j]);
      }
    }
  });
}

// out (dtype `out_dtype`) = A @ B computed in dtype `compute`; uses a temporary when the
// two differ.
void compute_into(const Side& l, const Side& r, const Dims& d, DType compute, DType out_dtype,
                  void* out) {
  const bool f32 = compute == DType::kF32;
  View a = prepare(l, compute, f32), b = prepare(r, compute, f32);
  std::shared_ptr<Buffer> tmp;
  void* c = out;
  if (compute != out_dtype) {
    tmp = Buffer::make(d.b * d.m * d.n * dtype_size(compute));
    c = tmp->data();
  }
  bool done = false;
  if (f32) {
    GemmDesc g{d.b, d.m, d.k, d.n, a.strides, b.strides, DType::kF32, DType::kF32};
    done = onednn_matmul(g, a.data, b.data, c);
    if (!done) {  // Eigen wants dense operands
      a = prepare(l, compute, false);
      b = prepare(r, compute, false);
    }
  }
  if (!done) {
    switch (compute) {
      case DType::kF32:
        eigen_gemm(d, static_cast<const float*>(a.data), static_cast<const float*>(b.data),
                   static_cast<float*>(c));
        break;
      case DType::kF64:
        eigen_gemm(d, static_cast<const double*>(a.data), static_cast<const double*>(b.data),
                   static_cast<double*>(c));
        break;
      default:
        dispatch_dtype(compute, [&]<typename T>() {
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            int_gemm(d, static_cast<const T*>(a.data), static_cast<const T*>(b.data),
                     static_cast<T*>(c));
          }
        });
    }
  }
  if (tmp) convert_elements(c, compute, out, out_dtype, d.b * d.m * d.n);
}

// fp8 operands: every fp8 value is exact in bf16, so oneDNN's bf16 GEMM (f32 accumulation) on
// widened copies gives the f32-accumulated product; its f32 (or bf16) result is rounded to
// another output dtype once. Without a oneDNN bf16 GEMM, f32 through Eigen.
void float8_dot(const Side& l, const Side& r, const Dims& d, DType od, void* out) {
  View a = prepare(l, DType::kBF16, false), b = prepare(r, DType::kBF16, false);
  const bool direct = od == DType::kF32 || od == DType::kBF16;
  std::shared_ptr<Buffer> tmp;
  if (!direct) tmp = Buffer::make(d.b * d.m * d.n * dtype_size(DType::kF32));
  GemmDesc g{d.b, d.m, d.k, d.n, a.strides, b.strides, DType::kBF16,
             direct ? od : DType::kF32};
  if (onednn_matmul(g, a.data, b.data, direct ? out : tmp->data())) {
    if (tmp) convert_elements(tmp->data(), DType::kF32, out, od, d.b * d.m * d.n);
    return;
  }
  compute_into(l, r, d, DType::kF32, od, out);
}

void dot_general_kernel(Call& call) {
  const auto& p = call.params<DotGeneral>();
  const DotDims& dd = p.dims();
  const Aval& out_aval = call.out_aval();
  void* out = call.out_raw();
  const int64_t out_bytes = numel(out_aval.shape) * dtype_size(out_aval.dtype);
  if (out_bytes == 0) return;
  Side l = make_side(call, 0, dd.lhs_batch, dd.lhs_contract, false);  // [B, M, K]
  Side r = make_side(call, 1, dd.rhs_batch, dd.rhs_contract, true);   // [B, K, N]
  Dims d{l.size[0], l.size[1], l.size[2], r.size[2]};
  if (d.k == 0) {
    std::memset(out, 0, out_bytes);  // all-zero bits are zero in every numeric dtype
    return;
  }
  const DType in = l.dtype, od = out_aval.dtype;
  if (is_float8(l.dtype) || is_float8(r.dtype)) return float8_dot(l, r, d, od, out);
  if (in == DType::kBF16 && (od == DType::kBF16 || od == DType::kF32)) {
    View a = prepare(l, in, true), b = prepare(r, in, true);
    GemmDesc g{d.b, d.m, d.k, d.n, a.strides, b.strides, DType::kBF16, od};
    if (onednn_matmul(g, a.data, b.data, out)) return;
  }
  DType compute;
  if (is_floating(od) || is_floating(in)) {
    compute = (od == DType::kF64 || in == DType::kF64) ? DType::kF64 : DType::kF32;
  } else {
    compute = od;  // integers accumulate (and wrap) in the output dtype
  }
  compute_into(l, r, d, compute, od, out);
}

}  // namespace

void register_ragged_dot_kernel(KernelTable& table);  // ragged_dot_kernel.cc

void register_linalg_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kDotGeneral)] = &dot_general_kernel;
  register_ragged_dot_kernel(table);
}

}  // namespace graft::cpu
