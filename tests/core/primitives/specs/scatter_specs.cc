// Specs of scatter, scatter_mul, scatter_min and scatter_max (ScatterCombine,
// core/primitives/index.h) through the public lax ops (core/lax/gather.h) scattering rows:
// operand (n, s), indices (m, 1), updates (m, s). References are plain loops over the updates
// in order on double values (set: the last one wins; out-of-range rows dropped).
#include <cmath>
#include <string>

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

enum class Op { kSet, kMul, kMin, kMax };

double combine(Op op, double a, double b) {
  switch (op) {
    case Op::kSet:
      return b;
    case Op::kMul:
      return a * b;
    case Op::kMin:
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    default:
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  }
}

// Integer products wrap like the kernels' (two's complement / modulo 2^8).
double wrap(double v, DType d) {
  if (d == DType::kU8) return std::fmod(std::fmod(v, 256.0) + 256.0, 256.0);
  if (d == DType::kI32) {
    double m = std::fmod(v, 4294967296.0);
    if (m >= 2147483648.0) m -= 4294967296.0;
    if (m < -2147483648.0) m += 4294967296.0;
    return m;
  }
  return v;
}

Expected ref_rows(Op op, const Array& x, const Array& idx, const Array& u) {
  const int64_t n = x.shape()[0], s = x.shape()[1];
  std::vector<double> acc = values_of(x), iv = values_of(idx), uv = values_of(u);
  for (size_t j = 0; j < iv.size(); ++j) {
    const auto k = static_cast<int64_t>(iv[j]);
    if (k < 0 || k >= n) continue;
    for (int64_t e = 0; e < s; ++e) {
      double& a = acc[k * s + e];
      a = wrap(combine(op, a, uv[j * s + e]), x.dtype());
    }
  }
  Expected e{x.shape(), x.dtype(), {}};
  for (double v : acc) e.values.push_back(round_to(v, x.dtype()));
  return e;
}

Array rows_of(Op op, const Array& x, const Array& idx, const Array& u) {
  const ScatterDimensionNumbers dn{{1}, {0}, {0}};
  switch (op) {
    case Op::kSet:
      return scatter(x, idx, u, dn);
    case Op::kMul:
      return scatter_mul(x, idx, u, dn);
    case Op::kMin:
      return scatter_min(x, idx, u, dn);
    default:
      return scatter_max(x, idx, u, dn);
  }
}

Spec rows_spec(PrimitiveId id, Op op) {
  Spec s{id};
  auto add = [&](const std::string& nm, Array x, std::vector<double> rows, Array u,
                 double rtol = 0) {
    Array idx = make(rows, {static_cast<int64_t>(rows.size()), 1}, DType::kI32);
    s.cases.push_back({nm,
                       {x, idx, u},
                       [op](const std::vector<Array>& in) { return rows_of(op, in[0], in[1], in[2]); },
                       ref_rows(op, x, idx, u),
                       rtol,
                       rtol});
  };
  // Duplicate rows (2 twice, 0 twice), one out of range each side (dropped).
  const std::vector<double> dup = {2, 0, 2, -1, 0, 5, 3};
  add("f32 duplicates", random_array({5, 3}, DType::kF32, 1), dup,
      random_array({7, 3}, DType::kF32, 2, 0.5, 2), 2e-7);
  add("f64 unique", random_array({4, 2}, DType::kF64, 3), {3, 1}, random_array({2, 2}, DType::kF64, 4),
      1e-15);
  add("bf16 duplicates", random_array({4, 2}, DType::kBF16, 5), {1, 1, 3},
      random_array({3, 2}, DType::kBF16, 6, 0.5, 2), default_rtol(DType::kBF16));
  add("i32 duplicates", random_array({4, 3}, DType::kI32, 7, -50, 50), {0, 3, 0, 9},
      random_array({4, 3}, DType::kI32, 8, -50, 50));
  add("u8 wraps", random_array({3, 2}, DType::kU8, 9, 100, 250), {1, 1, 1},
      random_array({3, 2}, DType::kU8, 10, 100, 250));
  // Many updates into few rows: the kernel splits the work along rows' elements.
  std::vector<double> many = random_values(300, DType::kI32, 13, -4, 40);
  add("many updates", random_array({32, 200}, DType::kF32, 14), many,
      random_array({300, 200}, DType::kF32, 15, 0.9, 1.1), 1e-5);
  s.cases.back().skip_grad = "300 x 200 updates: the values are checked; the small cases check "
                             "the derivative";
  if (op == Op::kMin || op == Op::kMax) {
    add("NaN propagates", make({1, NAN, 3, 4}, {2, 2}, DType::kF32), {0, 1},
        make({NAN, 0, 5, -5}, {2, 2}, DType::kF32));
    s.cases.back().skip_grad = "NaN values";
  }
  if (op == Op::kSet) {
    add("bool", random_array({4, 2}, DType::kBool, 16), {3, 0, 3},
        random_array({3, 2}, DType::kBool, 17));
  }
  return s;
}

}  // namespace

GRAFT_SPEC(Scatter) { return rows_spec(PrimitiveId::kScatter, Op::kSet); }
GRAFT_SPEC(ScatterMul) { return rows_spec(PrimitiveId::kScatterMul, Op::kMul); }
GRAFT_SPEC(ScatterMin) { return rows_spec(PrimitiveId::kScatterMin, Op::kMin); }
GRAFT_SPEC(ScatterMax) { return rows_spec(PrimitiveId::kScatterMax, Op::kMax); }

}  // namespace graft::spec
