// Float edge rows from JAX 0.10.2 on CPU (x64 off; the f64 rows follow the same IEEE rules):
//   jnp.sqrt(jnp.arange(1, 32, dtype=jnp.float32)): correctly rounded (the values of
//     float(sqrt(double(k))), which the rows use); jnp.sqrt([inf, 0., -0., 4., .25]) is
//     [inf, 0., -0., 2., .5]
//   lax.rsqrt([inf, 0., -0., -1., -inf, nan, 4., .25]) = [0., inf, -inf, nan, nan, nan, .5, 2.]
//   jnp.sign([-0., 0., nan, -3., 2., inf, -inf, 1e-30]) = [-0., 0., nan, -1., 1., 1., -1., 1.]
//   jnp.maximum / jnp.minimum of kMaxMinA, kMaxMinB below (both orders of the signed zeros)
//   jnp.argsort([0., -0., nan, 1., -nan, -0., 0., -inf, inf, -1.]) = [7, 9, 0, 1, 5, 6, 3, 8, 2,
//     4]; jnp.sort of it keeps the zeros' signs in that order (+0, -0, -0, +0)
// The table compares zero signs and (rtol = atol = 0) exact values.
#include "tests/core/primitives/specs/jax_edge_specs.h"

#include <cmath>
#include <limits>
#include <string>

namespace graft::spec {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<double> kMaxMinA = {0.0, -0.0, 0.0, -0.0, kNaN, 1.0, kNaN, -2.0, 3.0};
const std::vector<double> kMaxMinB = {-0.0, 0.0, 0.0, -0.0, 1.0, kNaN, kNaN, -2.0, -3.0};
const std::vector<double> kMax = {0.0, 0.0, 0.0, -0.0, kNaN, kNaN, kNaN, -2.0, 3.0};
const std::vector<double> kMin = {-0.0, -0.0, 0.0, -0.0, kNaN, kNaN, kNaN, -2.0, -3.0};

const char* kAtKinks =
    "edge values sit on the op's kinks, poles or NaNs: nothing to differentiate (the random "
    "cases check the derivative)";

Case unary_row(const std::string& name, DType d, const std::vector<double>& x,
               const std::vector<double>& want, Array (*op)(const Array&)) {
  const Shape s{static_cast<int64_t>(x.size())};
  Case c{name + " " + dtype_name(d),
         {make(x, s, d)},
         [op](const std::vector<Array>& in) { return op(in[0]); },
         Expected{s, d, {}}};
  for (double v : want) c.expected.values.push_back(round_to(v, d));
  c.skip_grad = kAtKinks;
  return c;
}

std::vector<Case> sqrt_rows() {
  std::vector<Case> out;
  std::vector<double> x, want;
  for (int k = 1; k <= 31; ++k) {
    x.push_back(k);
    want.push_back(std::sqrt(static_cast<double>(k)));
  }
  for (double v : {kInf, 0.0, -0.0, -1.0, 4.0, 0.25}) {
    x.push_back(v);
    want.push_back(std::sqrt(v));  // inf, 0, -0, NaN, 2, 0.5
  }
  auto op = [](const Array& a) { return sqrt(a); };
  // f32: float(sqrt(double)) is the correctly rounded f32 sqrt (53 >= 2 * 24 + 2 bits).
  out.push_back(unary_row("1..31 and specials, correctly rounded (JAX)", DType::kF32, x, want, op));
  out.push_back(unary_row("1..31 and specials, correctly rounded", DType::kF64, x, want, op));
  return out;
}

std::vector<Case> rsqrt_rows() {
  const std::vector<double> x = {kInf, 0.0, -0.0, -1.0, -kInf, kNaN, 4.0, 0.25};
  const std::vector<double> want = {0.0, kInf, -kInf, kNaN, kNaN, kNaN, 0.5, 2.0};
  std::vector<Case> out;
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16}) {
    out.push_back(unary_row("infinities and zeros (JAX)", d, x, want,
                            [](const Array& a) { return rsqrt(a); }));
  }
  return out;
}

std::vector<Case> sign_rows() {
  const std::vector<double> x = {-0.0, 0.0, kNaN, -3.0, 2.0, kInf, -kInf, 1e-30};
  const std::vector<double> want = {-0.0, 0.0, kNaN, -1.0, 1.0, 1.0, -1.0, 1.0};
  std::vector<Case> out;
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    std::vector<double> xd = x;
    if (d == DType::kF16) xd.back() = 1e-3;  // 1e-30 is below f16's range
    out.push_back(unary_row("signed zeros and NaN (JAX)", d, xd, want,
                            [](const Array& a) { return sign(a); }));
  }
  return out;
}

std::vector<Case> max_min_rows(bool is_max) {
  std::vector<Case> out;
  const Shape s{static_cast<int64_t>(kMaxMinA.size())};
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    Case c{std::string("signed zeros and NaN, both orders (JAX) ") + dtype_name(d),
           {make(kMaxMinA, s, d), make(kMaxMinB, s, d)},
           [is_max](const std::vector<Array>& in) {
             return is_max ? maximum(in[0], in[1]) : minimum(in[0], in[1]);
           },
           Expected{s, d, is_max ? kMax : kMin}};
    c.skip_grad = kAtKinks;
    out.push_back(c);
  }
  return out;
}

std::vector<Case> sort_rows() {
  const std::vector<double> v = {0.0, -0.0, kNaN, 1.0, -kNaN, -0.0, 0.0, -kInf, kInf, -1.0};
  const std::vector<double> perm = {7, 9, 0, 1, 5, 6, 3, 8, 2, 4};
  const Shape s{static_cast<int64_t>(v.size())};
  std::vector<Case> out;
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16}) {
    Case a{std::string("argsort: -0 and +0 tie, NaNs tie (JAX) ") + dtype_name(d),
           {make(v, s, d)},
           [](const std::vector<Array>& in) { return argsort(in[0]); },
           Expected{s, DType::kI32, perm}};
    Expected sorted{s, d, {}};
    for (double p : perm) sorted.values.push_back(v[static_cast<size_t>(p)]);
    Case b{std::string("sort keeps tied zeros' signs in input order (JAX) ") + dtype_name(d),
           {make(v, s, d)},
           [](const std::vector<Array>& in) { return sort(in[0]); },
           sorted};
    b.skip_grad = kAtKinks;
    out.push_back(a);
    out.push_back(b);
  }
  return out;
}

}  // namespace

std::vector<Case> jax_edge_cases(PrimitiveId id) {
  switch (id) {
    case PrimitiveId::kSqrt:
      return sqrt_rows();
    case PrimitiveId::kRsqrt:
      return rsqrt_rows();
    case PrimitiveId::kSign:
      return sign_rows();
    case PrimitiveId::kMax:
      return max_min_rows(true);
    case PrimitiveId::kMin:
      return max_min_rows(false);
    case PrimitiveId::kSort:
      return sort_rows();
    default:
      return {};
  }
}

Spec with_jax_edges(Spec s) {
  for (Case& c : jax_edge_cases(s.prim)) s.cases.push_back(std::move(c));
  return s;
}

}  // namespace graft::spec
