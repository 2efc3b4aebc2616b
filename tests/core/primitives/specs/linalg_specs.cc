// Specs for the linalg family (dot_general), reached through dot_general, matmul, dot and
// outer. References are plain loops in double over the inputs' stored values (so bf16 / f16
// inputs are already rounded), rounded to the output dtype at the end.
#include <algorithm>

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

std::vector<int> free_dims(int rank, const std::vector<int>& contract,
                           const std::vector<int>& batch) {
  std::vector<int> f;
  for (int d = 0; d < rank; ++d) {
    if (std::find(contract.begin(), contract.end(), d) == contract.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end()) {
      f.push_back(d);
    }
  }
  return f;
}

// lax.dot_general by loops: out[batch, lhs free, rhs free] = sum over contracting indices.
// `d` holds non-negative dims.
Expected ref_dot(const Array& l, const Array& r, const DotDims& d, DType out_dtype) {
  const Shape ls = l.shape(), rs = r.shape();
  const std::vector<double> lv = values_of(l), rv = values_of(r);
  const std::vector<int> lf = free_dims(l.ndim(), d.lhs_contract, d.lhs_batch);
  const std::vector<int> rf = free_dims(r.ndim(), d.rhs_contract, d.rhs_batch);
  Shape out, cs;
  for (int b : d.lhs_batch) out.push_back(ls[b]);
  for (int f : lf) out.push_back(ls[f]);
  for (int f : rf) out.push_back(rs[f]);
  for (int c : d.lhs_contract) cs.push_back(ls[c]);
  const size_t nb = d.lhs_batch.size();
  Expected e{out, out_dtype, {}};
  std::vector<int64_t> li(ls.size()), ri(rs.size());
  for (int64_t o = 0; o < numel(out); ++o) {
    std::vector<int64_t> oi = unravel(o, out);
    for (size_t j = 0; j < nb; ++j) li[d.lhs_batch[j]] = ri[d.rhs_batch[j]] = oi[j];
    for (size_t j = 0; j < lf.size(); ++j) li[lf[j]] = oi[nb + j];
    for (size_t j = 0; j < rf.size(); ++j) ri[rf[j]] = oi[nb + lf.size() + j];
    double sum = 0;
    for (int64_t c = 0; c < numel(cs); ++c) {
      std::vector<int64_t> ci = unravel(c, cs);
      for (size_t j = 0; j < ci.size(); ++j) li[d.lhs_contract[j]] = ri[d.rhs_contract[j]] = ci[j];
      sum += lv[ravel(li, ls)] * rv[ravel(ri, rs)];
    }
    e.values.push_back(round_to(sum, out_dtype));
  }
  return e;
}

// jnp.matmul by loops: 1-D operands get a unit dim (removed from the result), leading batch
// dims broadcast with NumPy rules.
Expected ref_matmul(const Array& a, const Array& b, DType out_dtype) {
  Shape as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const std::vector<double> av = values_of(a), bv = values_of(b);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  Shape batch(std::max(abatch.size(), bbatch.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    size_t ia = i + abatch.size(), ib = i + bbatch.size();  // aligned from the right
    int64_t da = ia >= batch.size() ? abatch[ia - batch.size()] : 1;
    int64_t db = ib >= batch.size() ? bbatch[ib - batch.size()] : 1;
    batch[i] = std::max(da, db);
  }
  auto src_batch = [&](const std::vector<int64_t>& bi, const Shape& s) {
    std::vector<int64_t> j(s.size());
    for (size_t t = 0; t < s.size(); ++t) j[t] = s[t] == 1 ? 0 : bi[batch.size() - s.size() + t];
    return ravel(j, s);
  };
  Expected e{batch, out_dtype, {}};
  if (!a_vec) e.shape.push_back(m);
  if (!b_vec) e.shape.push_back(n);
  for (int64_t o = 0; o < numel(batch); ++o) {
    auto bi = unravel(o, batch);
    int64_t ao = src_batch(bi, abatch) * m * k, bo = src_batch(bi, bbatch) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += av[ao + i * k + p] * bv[bo + p * n + j];
        e.values.push_back(round_to(s, out_dtype));
      }
    }
  }
  return e;
}

struct Tol {
  double rtol, atol;
};
Tol tol_for(DType out) {
  switch (out) {
    case DType::kBF16:
      return {1e-2, 1e-2};
    case DType::kF16:
      return {2e-3, 2e-3};
    case DType::kF32:
      return {1e-5, 1e-4};
    case DType::kF64:
      return {1e-12, 1e-12};
    default:
      return {0, 0};
  }
}

void add(Spec& s, std::string name, std::vector<Array> in,
         std::function<Array(const std::vector<Array>&)> fn, Expected e) {
  Tol t = tol_for(e.dtype);
  s.cases.push_back(
      Case{std::move(name), std::move(in), std::move(fn), std::move(e), t.rtol, t.atol});
}

// A dot_general case whose reference uses the same dims.
void add_dot(Spec& s, std::string name, const Shape& ls, const Shape& rs, const DotDims& d,
             DType dt, uint32_t seed, std::optional<DType> preferred = std::nullopt) {
  double lo = is_unsigned(dt) ? 0 : -2, hi = is_integral(dt) ? 9 : 2;
  Array l = random_array(ls, dt, seed, lo, hi), r = random_array(rs, dt, seed + 1, lo, hi);
  Expected e = ref_dot(l, r, d, preferred.value_or(dt));
  add(
      s, std::move(name), {l, r},
      [d, preferred](const std::vector<Array>& in) {
        return dot_general(in[0], in[1], d, preferred);
      },
      std::move(e));
}

void add_matmul(Spec& s, std::string name, const Shape& as, const Shape& bs, DType dt,
                uint32_t seed) {
  Array a = random_array(as, dt, seed), b = random_array(bs, dt, seed + 1);
  add(
      s, std::move(name), {a, b}, [](const std::vector<Array>& in) { return matmul(in[0], in[1]); },
      ref_matmul(a, b, dt));
}

}  // namespace

GRAFT_SPEC(DotGeneral) {
  Spec s{PrimitiveId::kDotGeneral};
  const DotDims mm{{1}, {0}, {}, {}};
  // Plain 2-D in every numeric dtype.
  for (DType dt : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                   DType::kU32}) {
    add_dot(s, std::string("2d_") + dtype_name(dt), {5, 7}, {7, 3}, mm, dt, 10);
  }
  // u8 wraps modulo 256 (values up to 19, K=9: sums reach ~3000).
  {
    Array l = random_array({4, 9}, DType::kU8, 3, 0, 20);
    Array r = random_array({9, 5}, DType::kU8, 4, 0, 20);
    add(
        s, "2d_u8_wraps", {l, r},
        [](const std::vector<Array>& in) {
          return dot_general(in[0], in[1], {{1}, {0}, {}, {}});
        },
        ref_dot(l, r, {{1}, {0}, {}, {}}, DType::kU8));
  }
  add_dot(s, "batched_f32", {2, 4, 3}, {2, 3, 5}, {{2}, {1}, {0}, {0}}, DType::kF32, 20);
  add_dot(s, "batched_bf16", {3, 6, 8}, {3, 8, 4}, {{2}, {1}, {0}, {0}}, DType::kBF16, 21);
  add_dot(s, "batched_i32", {2, 4, 3}, {2, 3, 5}, {{2}, {1}, {0}, {0}}, DType::kI32, 22);
  // Transposed operands (contracting lhs dim 0, rhs dim 1): strided GEMM, no copy.
  add_dot(s, "transposed_both_f32", {6, 4}, {5, 6}, {{0}, {1}, {}, {}}, DType::kF32, 30);
  add_dot(s, "transposed_both_f64", {6, 4}, {5, 6}, {{0}, {1}, {}, {}}, DType::kF64, 31);
  add_dot(s, "transposed_bf16", {6, 4}, {5, 6}, {{0}, {1}, {}, {}}, DType::kBF16, 32);
  // Batch and contracting dims in the middle; several contracting dims in swapped order.
  add_dot(s, "batch_in_middle_f32", {3, 2, 4, 5}, {5, 2, 6}, {{3}, {0}, {1}, {1}}, DType::kF32, 40);
  add_dot(s, "two_contracting_swapped_f32", {2, 3, 4}, {4, 3, 5}, {{1, 2}, {1, 0}, {}, {}},
          DType::kF32, 41);
  add_dot(s, "two_contracting_swapped_i64", {2, 3, 4}, {4, 3, 5}, {{1, 2}, {1, 0}, {}, {}},
          DType::kI64, 42);
  add_dot(s, "two_batch_dims_f64", {2, 5, 3, 4}, {3, 4, 2, 6}, {{3}, {1}, {0, 2}, {2, 0}},
          DType::kF64, 43);
  // Empty and degenerate sizes.
  add_dot(s, "k0_f32_zeros", {3, 0}, {0, 4}, mm, DType::kF32, 50);
  add_dot(s, "k0_i32_zeros", {3, 0}, {0, 4}, mm, DType::kI32, 51);
  add_dot(s, "m0_empty", {0, 3}, {3, 4}, mm, DType::kF32, 52);
  add_dot(s, "batch0_empty", {0, 2, 3}, {0, 3, 4}, {{2}, {1}, {0}, {0}}, DType::kF32, 53);
  add_dot(s, "scalars", {}, {}, {}, DType::kF32, 54);
  add_dot(s, "scalar_times_matrix_i32", {}, {2, 3}, {}, DType::kI32, 55);
  add_dot(s, "no_contraction_outer_f32", {4}, {3}, {}, DType::kF32, 56);
  add_dot(s, "vector_dot_f64", {7}, {7}, {{0}, {0}, {}, {}}, DType::kF64, 57);
  add_dot(s, "matrix_vector_bf16", {3, 7}, {7}, {{1}, {0}, {}, {}}, DType::kBF16, 58);
  add_dot(s, "unit_dims_f32", {1, 5, 1}, {1, 5, 3}, {{1}, {1}, {0}, {0}}, DType::kF32, 59);
  // Preferred output dtypes.
  add_dot(s, "bf16_to_f32", {5, 7}, {7, 3}, mm, DType::kBF16, 60, DType::kF32);
  add_dot(s, "f16_to_f32", {5, 7}, {7, 3}, mm, DType::kF16, 61, DType::kF32);
  add_dot(s, "i32_to_i64", {5, 7}, {7, 3}, mm, DType::kI32, 62, DType::kI64);
  add_dot(s, "i32_to_f32", {5, 7}, {7, 3}, mm, DType::kI32, 63, DType::kF32);
  add_dot(s, "f32_to_bf16", {5, 7}, {7, 3}, mm, DType::kF32, 64, DType::kBF16);
  add_dot(s, "f32_to_f64", {5, 7}, {7, 3}, mm, DType::kF32, 65, DType::kF64);
  // Negative dims.
  {
    Array l = random_array({4, 6}, DType::kF32, 70), r = random_array({6, 3}, DType::kF32, 71);
    add(
        s, "negative_dims", {l, r},
        [](const std::vector<Array>& in) {
          return dot_general(in[0], in[1], {{-1}, {-2}, {}, {}});
        },
        ref_dot(l, r, mm, DType::kF32));
  }
  // Non-contiguous operand: the transpose of a random array (the reference indexes the
  // original, contracting its dim 0).
  {
    Array x = random_array({6, 4}, DType::kF32, 72), r = random_array({6, 3}, DType::kF32, 73);
    add(
        s, "transposed_input", {x, r},
        [](const std::vector<Array>& in) {
          return dot_general(transpose(in[0]), in[1], {{1}, {0}, {}, {}});
        },
        ref_dot(x, r, {{0}, {0}, {}, {}}, DType::kF32));
  }
  // matmul: broadcasting batch dims and 1-D operands; dot and outer.
  add_matmul(s, "matmul_2d_f32", {5, 7}, {7, 3}, DType::kF32, 80);
  add_matmul(s, "matmul_broadcast_f32", {2, 1, 3, 4}, {5, 4, 2}, DType::kF32, 81);
  add_matmul(s, "matmul_broadcast_bf16", {1, 3, 2, 4}, {2, 1, 4, 5}, DType::kBF16, 82);
  add_matmul(s, "matmul_lhs_batch_only_f64", {2, 3, 3, 4}, {4, 2}, DType::kF64, 83);
  add_matmul(s, "matmul_rhs_batch_only_f32", {3, 4}, {2, 4, 5}, DType::kF32, 84);
  add_matmul(s, "matmul_vec_mat_f32", {4}, {3, 4, 2}, DType::kF32, 85);
  add_matmul(s, "matmul_mat_vec_i32", {2, 3, 4}, {4}, DType::kI32, 86);
  add_matmul(s, "matmul_vec_vec_f64", {6}, {6}, DType::kF64, 87);
  add_matmul(s, "matmul_k0", {2, 3, 0}, {0, 4}, DType::kF32, 88);
  {
    Array a = random_array({2, 3, 4}, DType::kF32, 90),
          b = random_array({5, 4, 6}, DType::kF32, 91);
    add(
        s, "dot_nd", {a, b}, [](const std::vector<Array>& in) { return dot(in[0], in[1]); },
        ref_dot(a, b, {{2}, {1}, {}, {}}, DType::kF32));
  }
  {
    Array a = random_array({2, 2}, DType::kI32, 92, -5, 5),
          b = random_array({3}, DType::kI32, 93, -5, 5);
    add(
        s, "outer_flattens", {a, b},
        [](const std::vector<Array>& in) { return outer(in[0], in[1]); },
        ref_dot(make(values_of(a), {4}, DType::kI32), b, {}, DType::kI32));
  }
  return s;
}

}  // namespace graft::spec
