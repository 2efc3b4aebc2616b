// Specs for the factorizations (cholesky, qr, svd, eigh, lu, triangular_solve). References are
// plain loops in double over the inputs' stored values: Cholesky–Banachiewicz, modified
// Gram–Schmidt, cyclic Jacobi (eigh, and svd through the eigenvectors of x^T x), Doolittle with
// partial pivoting, and substitution. Each case's function makes its input well conditioned
// first (symmetric positive definite for cholesky, a symmetric matrix with distinct
// eigenvalues for eigh, a dominant diagonal for the solves) and removes the sign freedom of
// qr / svd / eigh as JAX's tests do (columns scaled so a fixed entry is positive), so finite
// differences see a smooth function.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/primitives/decomp.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

using Mat = std::vector<double>;  // row-major
Array T(const Array& x) { return swapaxes(x, -1, -2); }

// ---- the graft side of the cases

// x x^T + n I: symmetric positive definite.
Array spd(const Array& x) {
  const int64_t n = x.shape().back();
  return matmul(x, T(x)) + static_cast<double>(n) * eye(n, std::nullopt, 0, x.dtype());
}
// x + x^T: symmetric, with distinct eigenvalues for the random inputs used.
Array sym(const Array& x) { return x + T(x); }
// Columns of a scaled by the sign of row `row` of a (the fixed entry made positive).
Array col_signs(const Array& a, int64_t row) { return sign(slice_axis(a, -2, row, row + 1)); }
Array flat(const std::vector<Array>& xs) {
  std::vector<Array> f;
  for (const Array& x : xs) f.push_back(reshape(x, {-1}));
  return concatenate(f, 0);
}

// ---- plain references in double

Mat spd_ref(const Mat& x, int64_t n) {
  Mat a(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = i == j ? static_cast<double>(n) : 0.0;
      for (int64_t k = 0; k < n; ++k) s += x[i * n + k] * x[j * n + k];
      a[i * n + j] = s;
    }
  return a;
}

Mat cholesky_ref(const Mat& a, int64_t n) {
  Mat l(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = i == j ? std::sqrt(s) : s / l[j * n + j];
    }
  return l;
}

// Modified Gram–Schmidt on the first k = min(m, n) columns: q [m, k] with r's diagonal
// positive, and r = q^T a [k, n].
void qr_ref(const Mat& a, int64_t m, int64_t n, Mat& q, Mat& r) {
  const int64_t k = std::min(m, n);
  q.assign(m * k, 0.0);
  r.assign(k * n, 0.0);
  for (int64_t j = 0; j < k; ++j) {
    std::vector<double> v(m);
    for (int64_t i = 0; i < m; ++i) v[i] = a[i * n + j];
    for (int64_t p = 0; p < j; ++p) {
      double d = 0;
      for (int64_t i = 0; i < m; ++i) d += q[i * k + p] * v[i];
      for (int64_t i = 0; i < m; ++i) v[i] -= d * q[i * k + p];
    }
    double nrm = 0;
    for (double x : v) nrm += x * x;
    nrm = std::sqrt(nrm);
    for (int64_t i = 0; i < m; ++i) q[i * k + j] = v[i] / nrm;
  }
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < m; ++p) s += q[p * k + i] * a[p * n + j];
      r[i * n + j] = j < i ? 0.0 : s;
    }
}

// Cyclic Jacobi on symmetric a [n, n]: eigenvalues ascending, eigenvectors in columns.
void eigh_ref(Mat a, int64_t n, std::vector<double>& w, Mat& v) {
  v.assign(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (std::fabs(a[p * n + q]) < 1e-300) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // a <- a J (columns p, q)
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {  // a <- J^T a (rows p, q)
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t i, int64_t j) { return a[i * n + i] < a[j * n + j]; });
  Mat vs(n * n);
  w.resize(n);
  for (int64_t j = 0; j < n; ++j) {
    w[j] = a[order[j] * n + order[j]];
    for (int64_t i = 0; i < n; ++i) vs[i * n + j] = v[i * n + order[j]];
  }
  v = vs;
}

// Scales column j of x [r, c] by the sign of x[row, j]; returns the signs.
std::vector<double> fix_cols(Mat& x, int64_t r, int64_t c, int64_t row) {
  std::vector<double> sg(c);
  for (int64_t j = 0; j < c; ++j) {
    sg[j] = x[row * c + j] < 0 ? -1.0 : 1.0;
    for (int64_t i = 0; i < r; ++i) x[i * c + j] *= sg[j];
  }
  return sg;
}

Mat transpose_ref(const Mat& x, int64_t r, int64_t c) {
  Mat t(r * c);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t[j * r + i] = x[i * c + j];
  return t;
}

// Doolittle with partial pivoting (the first largest |pivot|, as LAPACK's getrf).
void lu_ref(Mat a, int64_t m, int64_t n, Mat& lu, std::vector<double>& piv,
            std::vector<double>& perm) {
  const int64_t k = std::min(m, n);
  perm.resize(m);
  std::iota(perm.begin(), perm.end(), 0.0);
  piv.assign(k, 0);
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m; ++i)
      if (std::fabs(a[i * n + j]) > std::fabs(a[p * n + j])) p = i;
    piv[j] = static_cast<double>(p);
    std::swap(perm[j], perm[p]);
    for (int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[p * n + c]);
    for (int64_t i = j + 1; i < m; ++i) {
      a[i * n + j] /= a[j * n + j];
      for (int64_t c = j + 1; c < n; ++c) a[i * n + c] -= a[i * n + j] * a[j * n + c];
    }
  }
  lu = a;
}

void set_tol(Case& c, DType d) {
  c.rtol = d == DType::kF64 ? 1e-9 : 2e-4;
  c.atol = d == DType::kF64 ? 1e-9 : 2e-4;
}

Expected expect(const Shape& s, DType d, std::vector<double> v) {
  for (double& x : v) x = round_to(x, d);
  return {s, d, std::move(v)};
}

// Runs `per_matrix` on each [rows, cols] matrix of x's batch and concatenates the results.
template <typename F>
std::vector<double> per_batch(const Array& x, F per_matrix) {
  const int64_t r = x.shape()[x.ndim() - 2], c = x.shape().back();
  const std::vector<double> v = values_of(x);
  std::vector<double> out;
  for (size_t b = 0; b * r * c < v.size(); ++b) {
    Mat m(v.begin() + b * r * c, v.begin() + (b + 1) * r * c);
    std::vector<double> o = per_matrix(m, r, c);
    out.insert(out.end(), o.begin(), o.end());
  }
  return out;
}

}  // namespace

GRAFT_SPEC(Cholesky) {
  Spec s{PrimitiveId::kCholesky};
  for (auto [name, shape, d] : {std::tuple{"f64_4x4", Shape{4, 4}, DType::kF64},
                                std::tuple{"f32_batch_2x3x3", Shape{2, 3, 3}, DType::kF32}}) {
    Array x = random_array(shape, d, 11);
    Case c{name, {x}, [](const std::vector<Array>& in) { return cholesky(spd(in[0])); },
           expect(shape, d, per_batch(x, [](const Mat& m, int64_t n, int64_t) {
                    return cholesky_ref(spd_ref(m, n), n);
                  }))};
    set_tol(c, d);
    s.cases.push_back(std::move(c));
  }
  return s;
}

GRAFT_SPEC(TriangularSolve) {
  Spec s{PrimitiveId::kTriangularSolve};
  struct Variant {
    const char* name;
    TriangularSolveParams p;
    DType d;
  };
  for (const Variant& v : {Variant{"left_lower_f64", {true, true, false, false}, DType::kF64},
                           Variant{"right_upper_trans_f64", {false, false, true, false}, DType::kF64},
                           Variant{"left_upper_trans_unit_f32", {true, false, true, true}, DType::kF32},
                           Variant{"right_lower_unit_f64", {false, true, false, true}, DType::kF64}}) {
    const int64_t m = 3, k = 2;
    const Shape bs = v.p.left_side ? Shape{2, m, k} : Shape{2, k, m};
    Array a = random_array({2, m, m}, v.d, 21), b = random_array(bs, v.d, 22);
    const TriangularSolveParams p = v.p;
    auto fn = [p](const std::vector<Array>& in) {
      const int64_t n = in[0].shape().back();
      Array dominant = in[0] + 4.0 * eye(n, std::nullopt, 0, in[0].dtype());
      return triangular_solve(dominant, in[1], p.left_side, p.lower, p.transpose_a,
                              p.unit_diagonal);
    };
    // Reference: op(A) as a dense matrix, then substitution on each right-hand side.
    const std::vector<double> av = values_of(a), bv = values_of(b);
    std::vector<double> out;
    for (int64_t bt = 0; bt < 2; ++bt) {
      Mat op(m * m, 0.0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) {
          const bool in_tri = p.lower ? j <= i : j >= i;
          double val = av[bt * m * m + i * m + j] + (i == j ? 4.0 : 0.0);
          if (i == j && p.unit_diagonal) val = 1.0;
          if (!in_tri) val = 0.0;
          if (p.transpose_a) op[j * m + i] = val; else op[i * m + j] = val;
        }
      // Left: op x = b column by column. Right: x op = b  <=>  op^T x^T = b^T.
      Mat sys = p.left_side ? op : transpose_ref(op, m, m);
      Mat rhs(bv.begin() + bt * m * k, bv.begin() + (bt + 1) * m * k);
      if (!p.left_side) rhs = transpose_ref(rhs, k, m);  // now [m, k]
      Mat x(m * k);
      // sys is triangular (lower or upper); solve by Gaussian elimination without pivoting.
      for (int64_t col = 0; col < k; ++col) {
        Mat aug = sys;
        std::vector<double> y(m);
        for (int64_t i = 0; i < m; ++i) y[i] = rhs[i * k + col];
        for (int64_t j = 0; j < m; ++j)
          for (int64_t i = 0; i < m; ++i) {
            if (i == j || aug[i * m + j] == 0) continue;
            const double f = aug[i * m + j] / aug[j * m + j];
            for (int64_t c2 = 0; c2 < m; ++c2) aug[i * m + c2] -= f * aug[j * m + c2];
            y[i] -= f * y[j];
          }
        for (int64_t i = 0; i < m; ++i) x[i * k + col] = y[i] / aug[i * m + i];
      }
      if (!p.left_side) x = transpose_ref(x, m, k);
      out.insert(out.end(), x.begin(), x.end());
    }
    Case c{v.name, {a, b}, fn, expect(bs, v.d, out)};
    set_tol(c, v.d);
    s.cases.push_back(std::move(c));
  }
  return s;
}

GRAFT_SPEC(Lu) {
  Spec s{PrimitiveId::kLu};
  for (auto [name, shape, d] : {std::tuple{"f64_4x4", Shape{4, 4}, DType::kF64},
                                std::tuple{"f32_batch_2x4x3", Shape{2, 4, 3}, DType::kF32},
                                std::tuple{"f64_wide_3x5", Shape{3, 5}, DType::kF64}}) {
    Array x = random_array(shape, d, 31);
    Case c{name, {x}, [](const std::vector<Array>& in) { return lu(in[0]).lu; },
           expect(shape, d, per_batch(x, [](const Mat& m, int64_t r, int64_t cc) {
                    Mat f;
                    std::vector<double> piv, perm;
                    lu_ref(m, r, cc, f, piv, perm);
                    return f;
                  }))};
    set_tol(c, d);
    s.cases.push_back(std::move(c));
  }
  // The pivots and the permutation, as one i32 vector.
  Array x = random_array({2, 4, 4}, DType::kF64, 32);
  Case c{"pivots_and_permutation",
         {x},
         [](const std::vector<Array>& in) {
           LuResult f = lu(in[0]);
           return concatenate({f.pivots, f.permutation}, -1);
         },
         expect({2, 8}, DType::kI32, per_batch(x, [](const Mat& m, int64_t r, int64_t cc) {
                  Mat f;
                  std::vector<double> piv, perm;
                  lu_ref(m, r, cc, f, piv, perm);
                  piv.insert(piv.end(), perm.begin(), perm.end());
                  return piv;
                }))};
  s.cases.push_back(std::move(c));
  return s;
}

GRAFT_SPEC(Qr) {
  Spec s{PrimitiveId::kQr};
  struct V {
    const char* name;
    Shape shape;
    bool full;
    DType d;
    const char* skip;
  };
  for (const V& v : {V{"reduced_f64_5x3", {5, 3}, false, DType::kF64, ""},
                     V{"complete_square_f32_batch", {2, 3, 3}, true, DType::kF32, ""},
                     V{"reduced_wide_f64_3x4", {3, 4}, false, DType::kF64,
                       "JAX defines no qr derivative for m < n"}}) {
    Array x = random_array(v.shape, v.d, 41);
    const bool full = v.full;
    // q's columns and r's rows scaled by the signs of r's diagonal: r's diagonal positive.
    auto fn = [full](const std::vector<Array>& in) {
      QrResult f = qr(in[0], full);
      Array sg = sign(::graft::diagonal(f.r, 0, -2, -1));
      // triu: r's zeros scaled by -1 would be -0; the table pins the sign of zeros, the
      // reference has +0.
      return flat({f.q * expand_dims(sg, {-2}), triu(f.r * expand_dims(sg, {-1}))});
    };
    std::vector<double> qs, rs;
    per_batch(x, [&](const Mat& m, int64_t r, int64_t cc) {
      Mat q, rr;
      qr_ref(m, r, cc, q, rr);
      qs.insert(qs.end(), q.begin(), q.end());
      rs.insert(rs.end(), rr.begin(), rr.end());
      return std::vector<double>{};
    });
    qs.insert(qs.end(), rs.begin(), rs.end());
    const int64_t n = static_cast<int64_t>(qs.size());
    Case c{v.name, {x}, fn, expect({n}, v.d, qs)};
    c.skip_grad = v.skip;
    set_tol(c, v.d);
    s.cases.push_back(std::move(c));
  }
  return s;
}

namespace {
// The svd of a [m, n] from the eigen-decomposition of a^T a (or a a^T when m < n): s
// descending, u's and vt's sign fixed by u's row 0 (u [m, k], vt [k, n]).
void svd_ref(const Mat& a, int64_t m, int64_t n, std::vector<double>& s, Mat& u, Mat& vt) {
  const bool tall = m >= n;
  const Mat b = tall ? a : transpose_ref(a, m, n);
  const int64_t r = tall ? m : n, c = tall ? n : m;  // b is [r, c], r >= c
  Mat g(c * c, 0.0);
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t p = 0; p < r; ++p) g[i * c + j] += b[p * c + i] * b[p * c + j];
  std::vector<double> w;
  Mat v;
  eigh_ref(g, c, w, v);
  s.assign(c, 0.0);
  Mat vv(c * c), uu(r * c, 0.0);
  for (int64_t j = 0; j < c; ++j) {  // descending
    const int64_t src = c - 1 - j;
    s[j] = std::sqrt(std::max(w[src], 0.0));
    for (int64_t i = 0; i < c; ++i) vv[i * c + j] = v[i * c + src];
    for (int64_t i = 0; i < r; ++i) {
      double d = 0;
      for (int64_t p = 0; p < c; ++p) d += b[i * c + p] * vv[p * c + j];
      uu[i * c + j] = d / s[j];
    }
  }
  // b = uu diag(s) vv^T; a = b or b^T.
  Mat ua = tall ? uu : vv, va = tall ? vv : uu;  // a = ua diag(s) va^T, ua [m, k], va [n, k]
  std::vector<double> sg = fix_cols(ua, m, c, 0);
  for (int64_t j = 0; j < c; ++j)
    for (int64_t i = 0; i < n; ++i) va[i * c + j] *= sg[j];
  u = ua;
  vt = transpose_ref(va, n, c);
}
}  // namespace

GRAFT_SPEC(Svd) {
  Spec s{PrimitiveId::kSvd};
  struct V {
    const char* name;
    Shape shape;
    bool full, uv;
    DType d;
    const char* skip;
  };
  for (const V& v : {V{"reduced_f64_4x3", {4, 3}, false, true, DType::kF64, ""},
                     V{"reduced_wide_f32_batch", {2, 3, 4}, false, true, DType::kF32, ""},
                     V{"values_only_f64_3x5", {3, 5}, false, false, DType::kF64, ""},
                     V{"full_square_f64", {3, 3}, true, true, DType::kF64,
                       "JAX defines no svd derivative with full_matrices=True"}}) {
    Array x = random_array(v.shape, v.d, 51);
    const bool full = v.full, uv = v.uv;
    auto fn = [full, uv](const std::vector<Array>& in) {
      SvdResult f = svd(in[0], full, uv);
      if (!uv) return f.s;
      Array sg = col_signs(f.u, 0);
      return flat({f.s, f.u * sg, f.vh * T(sg)});
    };
    std::vector<double> ss, us, vs;
    per_batch(x, [&](const Mat& m, int64_t r, int64_t cc) {
      std::vector<double> sv;
      Mat u, vt;
      svd_ref(m, r, cc, sv, u, vt);
      ss.insert(ss.end(), sv.begin(), sv.end());
      us.insert(us.end(), u.begin(), u.end());
      vs.insert(vs.end(), vt.begin(), vt.end());
      return std::vector<double>{};
    });
    Shape out_shape = Shape(v.shape.begin(), v.shape.end() - 2);
    out_shape.push_back(std::min(v.shape[v.shape.size() - 2], v.shape.back()));
    if (uv) {
      ss.insert(ss.end(), us.begin(), us.end());
      ss.insert(ss.end(), vs.begin(), vs.end());
      out_shape = {static_cast<int64_t>(ss.size())};
    }
    Case c{v.name, {x}, fn, expect(out_shape, v.d, ss)};
    c.skip_grad = v.skip;
    set_tol(c, v.d);
    s.cases.push_back(std::move(c));
  }
  return s;
}

GRAFT_SPEC(Eigh) {
  Spec s{PrimitiveId::kEigh};
  for (auto [name, shape, d, lower] :
       {std::tuple{"lower_f64_4x4", Shape{4, 4}, DType::kF64, true},
        std::tuple{"upper_f32_batch_2x3x3", Shape{2, 3, 3}, DType::kF32, false}}) {
    Array x = random_array(shape, d, 61);
    const bool lo = lower;
    auto fn = [lo](const std::vector<Array>& in) {
      EighResult f = eigh(sym(in[0]), lo, /*symmetrize_input=*/false);
      return flat({f.eigenvalues, f.eigenvectors * col_signs(f.eigenvectors, 0)});
    };
    std::vector<double> ws, vs;
    per_batch(x, [&](const Mat& m, int64_t n, int64_t) {
      Mat a(n * n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) a[i * n + j] = m[i * n + j] + m[j * n + i];
      std::vector<double> w;
      Mat v;
      eigh_ref(a, n, w, v);
      fix_cols(v, n, n, 0);
      ws.insert(ws.end(), w.begin(), w.end());
      vs.insert(vs.end(), v.begin(), v.end());
      return std::vector<double>{};
    });
    ws.insert(ws.end(), vs.begin(), vs.end());
    const int64_t total = static_cast<int64_t>(ws.size());
    Case c{name, {x}, fn, expect({total}, d, ws)};
    set_tol(c, d);
    s.cases.push_back(std::move(c));
  }
  return s;
}

}  // namespace graft::spec
