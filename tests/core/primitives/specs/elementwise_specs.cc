// Specs of the elementwise family. References are plain loops over double values (ints and
// bools exact), rounded to the output dtype.
#include <cmath>
#include <limits>

#include "tests/core/primitives/specs/jax_edge_specs.h"
#include "tests/core/primitives/specs/jax_parity_cases.h"
#include "tests/core/primitives/specs/spec.h"
#include "transforms/autodiff.h"

namespace graft::spec {
namespace {

using UFn = std::function<double(double)>;
using BFn = std::function<double(double, double)>;
using OpFn = std::function<Array(const Array&)>;
using BOpFn = std::function<Array(const Array&, const Array&)>;

double tol_for(DType d, double extra) { return default_rtol(d) * extra; }

// erf^-1 by Newton's method on std::erf in double: independent of graft's kernel.
double erfinv_ref(double x) {
  if (std::fabs(x) >= 1) return x > 0 ? INFINITY : -INFINITY;
  double y = 0;
  for (int i = 0; i < 100; ++i) y -= (std::erf(y) - x) / (2 / std::sqrt(M_PI) * std::exp(-y * y));
  return y;
}

// The first random seed of an op's cases, from its name (FNV-1a), so that adding a row to the
// list does not change the values other ops are tested on.
uint32_t seed_of(PrimitiveId id) {
  uint32_t h = 2166136261u;
  for (const char* c = kPrimitiveNames[static_cast<int>(id)]; *c != 0; ++c) {
    h = (h ^ static_cast<uint8_t>(*c)) * 16777619u;
  }
  return h % 1000000 * 100;
}

// Floating inputs of a piecewise-constant op (a row without kDiff: floor, ceil, round, sign)
// moved off its jumps (integers, half-integers, 0) to fractions in [0.05, 0.45), so that the
// finite differences of the gradient check never straddle one.
Array away_from_jumps(PrimitiveId id, const Array& x) {
  if (primitive_facts(id).has(kDiff) || !is_floating(x.dtype())) return x;
  std::vector<double> v = values_of(x);
  for (double& e : v) e = std::floor(e) + 0.05 + 0.4 * (e - std::floor(e));
  return make(v, x.shape(), x.dtype());
}

// Cases for a unary op over shapes (scalar, empty, 2-D, non-contiguous) and dtypes.
Spec unary_spec(PrimitiveId id, OpFn op, UFn ref, std::vector<DType> dtypes, double lo, double hi,
                double rtol_scale = 4, DType out = DType::kBool, bool same_out = true) {
  Spec s{id};
  uint32_t seed = seed_of(id);
  for (DType d : dtypes) {
    DType od = same_out ? d : out;
    double rtol = tol_for(d, rtol_scale);
    double atol = is_floating(d) ? rtol * 1e-3 : 0;
    for (Shape shape : {Shape{}, Shape{0}, Shape{3, 5}}) {
      Array x = away_from_jumps(id, random_array(shape, d, ++seed, lo, hi));
      s.cases.push_back({std::string(dtype_name(d)) + shape_str(shape),
                         {x},
                         [op](const std::vector<Array>& in) { return op(in[0]); },
                         ref_unary(x, od, ref),
                         rtol,
                         atol});
    }
    // Non-contiguous: op applied to the transpose of a (4, 3) array.
    Array base = away_from_jumps(id, random_array({4, 3}, d, ++seed, lo, hi));
    std::vector<double> bv = values_of(base), tv;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) tv.push_back(bv[i * 3 + j]);
    Expected e{{3, 4}, od, {}};
    for (double v : tv) e.values.push_back(round_to(ref(v), od));
    s.cases.push_back({std::string(dtype_name(d)) + " transposed",
                       {base},
                       [op](const std::vector<Array>& in) { return op(transpose(in[0])); },
                       e,
                       rtol,
                       atol});
  }
  return s;
}

// Cases for a binary op: equal shapes, broadcasting, weak scalar, empty, non-contiguous.
Spec binary_spec(PrimitiveId id, BOpFn op, BFn ref, std::vector<DType> dtypes, double lo, double hi,
                 std::optional<DType> out = std::nullopt, double rtol_scale = 2) {
  Spec s{id};
  uint32_t seed = seed_of(id);
  for (DType d : dtypes) {
    DType od = out.value_or(d);
    double rtol = tol_for(d, rtol_scale);
    auto add_case = [&](const std::string& name, const Shape& sa, const Shape& sb) {
      // b first: the order these seeds had as call arguments (evaluated right to left).
      Array b = random_array(sb, d, ++seed, lo, hi);
      Array a = random_array(sa, d, ++seed, lo, hi);
      s.cases.push_back({std::string(dtype_name(d)) + " " + name,
                         {a, b},
                         [op](const std::vector<Array>& in) { return op(in[0], in[1]); },
                         ref_binary(a, b, od, ref),
                         rtol,
                         0});
    };
    add_case("same", {2, 3}, {2, 3});
    add_case("broadcast", {3, 1}, {1, 4});
    add_case("rank-broadcast", {2, 3, 2}, {2});
    add_case("scalars", {}, {});
    add_case("empty", {0, 3}, {1, 3});
    // A weak C++ scalar keeps the array's dtype.
    Array a = random_array({5}, d, ++seed, lo, hi);
    double c = round_to(lo + (hi - lo) * 0.37, d);
    // A negative value wraps to near 2^64 in u64, which neither a double reference nor a C++
    // int64 scalar holds: u64 takes its scalar from the non-negative part of the range.
    if (d == DType::kU64) c = round_to(std::max(0.0, lo) + (hi - std::max(0.0, lo)) * 0.37, d);
    if (d != DType::kBool) {
      Expected e = ref_binary(a, make({c}, {}, d), od, ref);
      s.cases.push_back({std::string(dtype_name(d)) + " weak scalar",
                         {a},
                         [op, c, d](const std::vector<Array>& in) {
                           return op(in[0],
                                     is_floating(d) ? Array(c) : Array(static_cast<int64_t>(c)));
                         },
                         e,
                         rtol,
                         0});
    }
    // Non-contiguous: the first operand is the transpose of a stored (3, 2) array.
    Array base = random_array({3, 2}, d, ++seed, lo, hi);
    Array other = random_array({2, 3}, d, ++seed, lo, hi);
    std::vector<double> bv = values_of(base), tv;
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 3; ++i) tv.push_back(bv[i * 2 + j]);
    Expected e = ref_binary(make(tv, {2, 3}, d), other, od, ref);
    s.cases.push_back({std::string(dtype_name(d)) + " transposed",
                       {base, other},
                       [op](const std::vector<Array>& in) { return op(transpose(in[0]), in[1]); },
                       e,
                       rtol,
                       0});
  }
  return s;
}

const std::vector<DType> kFloats = {DType::kF32, DType::kF64, DType::kBF16, DType::kF16};
const std::vector<DType> kNumeric = {DType::kF32, DType::kF64, DType::kBF16, DType::kI32,
                                     DType::kI64, DType::kU8,  DType::kI8,   DType::kI16,
                                     DType::kU16, DType::kU64};
const std::vector<DType> kSigned = {DType::kF32, DType::kF64, DType::kF16, DType::kI32,
                                    DType::kI64, DType::kI8,  DType::kI16};
const std::vector<DType> kAll = {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32,
                                 DType::kI64, DType::kU8,  DType::kU32,  DType::kBool, DType::kI8,
                                 DType::kI16, DType::kU16, DType::kU64};
const std::vector<DType> kInts = {DType::kI32, DType::kI64, DType::kU8,  DType::kU32,
                                  DType::kI8,  DType::kI16, DType::kU16, DType::kU64};

double sgn(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

// JAX parity rows: f32 inputs and the results JAX 0.10.2 gave for them on CPU (x64 off), e.g.
//   lax.tan(jnp.array(kJaxInputs, jnp.float32)); printed with repr(float(v)).
// Within 2 ulp; NaNs, infinities and the signs of zeros exactly.
const std::vector<double> kJaxInputs = {0.0,       -0.0,       INFINITY, -INFINITY, NAN,
                                        1.5707964, -1.5707964, 1e-30,    1.0,       -2.5,
                                        100.0,     1e4,        1e30,     3.1415927};
Case jax_row(OpFn op, const std::vector<double>& want) {
  const Shape s{static_cast<int64_t>(kJaxInputs.size())};
  Case c{"f32 edge values (JAX)",
         {make(kJaxInputs, s, DType::kF32)},
         [op](const std::vector<Array>& in) { return op(in[0]); },
         Expected{s, DType::kF32, want},
         2.4e-7,
         0};
  c.skip_grad = "edge values sit on poles, infinities and NaNs (the random cases check d())";
  return c;
}

}  // namespace

GRAFT_SPEC(Neg) {
  return unary_spec(
      PrimitiveId::kNeg, [](const Array& x) { return -x; }, [](double x) { return -x; }, kSigned,
      -3, 3);
}
GRAFT_SPEC(Abs) {
  return unary_spec(
      PrimitiveId::kAbs, [](const Array& x) { return abs(x); },
      [](double x) { return std::fabs(x); }, kSigned, -3, 3);
}
GRAFT_SPEC(Sign) {
  return with_jax_edges(unary_spec(
      PrimitiveId::kSign, [](const Array& x) { return sign(x); }, sgn, kSigned, -3, 3));
}
GRAFT_SPEC(Square) {
  return unary_spec(
      PrimitiveId::kSquare, [](const Array& x) { return square(x); },
      [](double x) { return x * x; }, kSigned, -3, 3);
}
GRAFT_SPEC(Exp) {
  Spec s = unary_spec(
      PrimitiveId::kExp, [](const Array& x) { return exp(x); },
      [](double x) { return std::exp(x); }, kFloats, -3, 3);
  // Underflow: exp(-inf) is 0 and subnormal results are right (masked softmax relies on it).
  Array x = make({-INFINITY, -110, -100, -88.5, -87.2, 0, 88, 89}, {8}, DType::kF32);
  s.cases.push_back({"f32 underflow and overflow",
                     {x},
                     [](const std::vector<Array>& in) { return exp(in[0]); },
                     ref_unary(x, DType::kF32, [](double v) { return std::exp(v); }),
                     1e-6,
                     0});
  return s;
}
GRAFT_SPEC(Expm1) {
  return unary_spec(
      PrimitiveId::kExpm1, [](const Array& x) { return expm1(x); },
      [](double x) { return std::expm1(x); }, kFloats, -2, 2);
}
GRAFT_SPEC(Log) {
  return unary_spec(
      PrimitiveId::kLog, [](const Array& x) { return log(x); },
      [](double x) { return std::log(x); }, kFloats, 0.1, 5);
}
GRAFT_SPEC(Log1p) {
  return unary_spec(
      PrimitiveId::kLog1p, [](const Array& x) { return log1p(x); },
      [](double x) { return std::log1p(x); }, kFloats, -0.9, 3);
}
GRAFT_SPEC(Sqrt) {
  return with_jax_edges(unary_spec(
      PrimitiveId::kSqrt, [](const Array& x) { return sqrt(x); },
      [](double x) { return std::sqrt(x); }, kFloats, 0, 9));
}
GRAFT_SPEC(Rsqrt) {
  return with_jax_edges(unary_spec(
      PrimitiveId::kRsqrt, [](const Array& x) { return rsqrt(x); },
      [](double x) { return 1 / std::sqrt(x); }, kFloats, 0.1, 9));
}
GRAFT_SPEC(Sin) {
  return unary_spec(
      PrimitiveId::kSin, [](const Array& x) { return sin(x); },
      [](double x) { return std::sin(x); }, kFloats, -3, 3, 8);
}
GRAFT_SPEC(Cos) {
  return unary_spec(
      PrimitiveId::kCos, [](const Array& x) { return cos(x); },
      [](double x) { return std::cos(x); }, kFloats, -3, 3, 8);
}
GRAFT_SPEC(Tan) {
  Spec s = unary_spec(
      PrimitiveId::kTan, [](const Array& x) { return tan(x); },
      [](double x) { return std::tan(x); }, kFloats, -1.4, 1.4, 8);
  s.cases.push_back(
      jax_row([](const Array& x) { return tan(x); },
              {0.0, -0.0, NAN, NAN, NAN, -22877334.0, 22877334.0, 1.0000000031710769e-30,
               1.5574077367782593, 0.7470223307609558, -0.587213933467865, 0.32097113132476807,
               1.2935861349105835, 8.742277657347586e-08}));
  return s;
}
GRAFT_SPEC(Atan) {
  Spec s = unary_spec(
      PrimitiveId::kAtan, [](const Array& x) { return atan(x); },
      [](double x) { return std::atan(x); }, kFloats, -5, 5, 8);
  s.cases.push_back(
      jax_row([](const Array& x) { return atan(x); },
              {0.0, -0.0, 1.5707963705062866, -1.5707963705062866, NAN, 1.0038849115371704,
               -1.0038849115371704, 1.0000000031710769e-30, 0.7853981256484985, -1.1902899742126465,
               1.5607967376708984, 1.5706963539123535, 1.5707963705062866,
               1.262627363204956}));  // lax.atan
  return s;
}
GRAFT_SPEC(Asin) {
  Spec s = unary_spec(
      PrimitiveId::kAsin, [](const Array& x) { return asin(x); },
      [](double x) { return std::asin(x); }, kFloats, -0.95, 0.95, 8);
  s.cases.push_back(jax_row([](const Array& x) { return asin(x); },
                            {0.0, -0.0, NAN, NAN, NAN, NAN, NAN, 1.0000000031710769e-30,
                             1.5707963705062866, NAN, NAN, NAN, NAN, NAN}));  // lax.asin
  return s;
}
GRAFT_SPEC(Acos) {
  Spec s = unary_spec(
      PrimitiveId::kAcos, [](const Array& x) { return acos(x); },
      [](double x) { return std::acos(x); }, kFloats, -0.95, 0.95, 8);
  s.cases.push_back(jax_row([](const Array& x) { return acos(x); },
                            {1.5707963705062866, 1.5707963705062866, NAN, NAN, NAN, NAN, NAN,
                             1.5707963705062866, 0.0, NAN, NAN, NAN, NAN, NAN}));  // lax.acos
  return s;
}
GRAFT_SPEC(Sinh) {
  Spec s = unary_spec(
      PrimitiveId::kSinh, [](const Array& x) { return sinh(x); },
      [](double x) { return std::sinh(x); }, kFloats, -3, 3, 8);
  s.cases.push_back(
      jax_row([](const Array& x) { return sinh(x); },
              {0.0, -0.0, INFINITY, -INFINITY, NAN, 2.3012990951538086, -2.3012990951538086,
               1.0000000031710769e-30, 1.175201177597046, -6.050204753875732, INFINITY, INFINITY,
               INFINITY, 11.548739433288574}));  // lax.sinh
  return s;
}
GRAFT_SPEC(Cosh) {
  Spec s = unary_spec(
      PrimitiveId::kCosh, [](const Array& x) { return cosh(x); },
      [](double x) { return std::cosh(x); }, kFloats, -3, 3, 8);
  s.cases.push_back(jax_row([](const Array& x) { return cosh(x); },
                            {1.0, 1.0, INFINITY, INFINITY, NAN, 2.509178638458252,
                             2.509178638458252, 1.0, 1.5430805683135986, 6.132289409637451,
                             INFINITY, INFINITY, INFINITY, 11.591954231262207}));  // lax.cosh
  return s;
}
GRAFT_SPEC(Asinh) {
  Spec s = unary_spec(
      PrimitiveId::kAsinh, [](const Array& x) { return asinh(x); },
      [](double x) { return std::asinh(x); }, kFloats, -5, 5, 8);
  s.cases.push_back(
      jax_row([](const Array& x) { return asinh(x); },
              {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.233403205871582, -1.233403205871582,
               1.0000000031710769e-30, 0.8813736438751221, -1.647231101989746, 5.298342227935791,
               9.903487205505371, 69.77069854736328, 1.8622958660125732}));  // lax.asinh
  return s;
}
GRAFT_SPEC(Acosh) {
  Spec s = unary_spec(
      PrimitiveId::kAcosh, [](const Array& x) { return acosh(x); },
      [](double x) { return std::acosh(x); }, kFloats, 1.1, 5, 8);
  s.cases.push_back(jax_row(
      [](const Array& x) { return acosh(x); },
      {NAN, NAN, INFINITY, NAN, NAN, 1.023227572441101, NAN, NAN, 0.0, NAN, 5.29829216003418,
       9.903487205505371, 69.77069854736328, 1.8115262985229492}));  // lax.acosh
  return s;
}
GRAFT_SPEC(Atanh) {
  Spec s = unary_spec(
      PrimitiveId::kAtanh, [](const Array& x) { return atanh(x); },
      [](double x) { return std::atanh(x); }, kFloats, -0.95, 0.95, 8);
  s.cases.push_back(jax_row([](const Array& x) { return atanh(x); },
                            {0.0, -0.0, NAN, NAN, NAN, NAN, NAN, 1.0000000031710769e-30, INFINITY,
                             NAN, NAN, NAN, NAN, NAN}));  // lax.atanh
  return s;
}
GRAFT_SPEC(Tanh) {
  return unary_spec(
      PrimitiveId::kTanh, [](const Array& x) { return tanh(x); },
      [](double x) { return std::tanh(x); }, kFloats, -4, 4, 8);
}
GRAFT_SPEC(Logistic) {
  const auto ref = [](double x) { return 1 / (1 + std::exp(-x)); };
  Spec s = unary_spec(
      PrimitiveId::kLogistic, [](const Array& x) { return sigmoid(x); }, ref, kFloats, -6, 6, 8);
  // Relative precision over the whole range: the small results of negative x (down to e^-87,
  // f32's smallest normal region) and the values near 1, within a few ulp of the double
  // reference (JAX's are: sigmoid(-8) = 3.3535014e-4, where a rational approximation gave
  // 3.35425e-4). Values only: the derivative is checked on the rows above.
  for (DType d : {DType::kF32, DType::kF64}) {
    std::vector<double> xs;
    for (double x = -87; x <= 30; x += 0.25) xs.push_back(x);
    for (double x = -12; x <= -3; x += 0.01) xs.push_back(x);
    const Array x = make(xs, {static_cast<int64_t>(xs.size())}, d);
    Case c{std::string(dtype_name(d)) + " whole range, relative",
           {x},
           [](const std::vector<Array>& in) { return sigmoid(in[0]); },
           ref_unary(x, d, ref),
           d == DType::kF32 ? 6e-7 : 2e-15,
           0};
    c.skip_grad = "values only: the derivative is checked on the [-6, 6] rows";
    s.cases.push_back(c);
  }
  return s;
}
GRAFT_SPEC(Erf) {
  return unary_spec(
      PrimitiveId::kErf, [](const Array& x) { return erf(x); },
      [](double x) { return std::erf(x); }, kFloats, -2.5, 2.5, 8);
}
GRAFT_SPEC(ErfInv) {
  return unary_spec(
      PrimitiveId::kErfInv, [](const Array& x) { return erf_inv(x); }, erfinv_ref, kFloats, -0.99,
      0.99, 8);
}
GRAFT_SPEC(Floor) {
  return unary_spec(
      PrimitiveId::kFloor, [](const Array& x) { return floor(x); },
      [](double x) { return std::floor(x); }, kFloats, -5, 5);
}
GRAFT_SPEC(Ceil) {
  return unary_spec(
      PrimitiveId::kCeil, [](const Array& x) { return ceil(x); },
      [](double x) { return std::ceil(x); }, kFloats, -5, 5);
}
GRAFT_SPEC(Round) {
  Spec s = unary_spec(
      PrimitiveId::kRound, [](const Array& x) { return round(x); },
      [](double x) { return std::nearbyint(x); }, kFloats, -5, 5);
  // Halves round to even, like jnp.round.
  Array h = make({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}, {6}, DType::kF32);
  Case c{"halves to even",
         {h},
         [](const std::vector<Array>& in) { return round(in[0]); },
         Expected{{6}, DType::kF32, {-2, -2, -0.0, 0, 2, 2}}};
  c.skip_grad = "inputs sit on round's jumps: finite differences straddle them";
  s.cases.push_back(c);
  return s;
}
GRAFT_SPEC(IsFinite) {
  Spec s = unary_spec(
      PrimitiveId::kIsFinite, [](const Array& x) { return isfinite(x); },
      [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }, kFloats, -5, 5, 1, DType::kBool,
      false);
  double inf = std::numeric_limits<double>::infinity();
  Array x = make({1.0, inf, -inf, NAN, 0.0}, {5}, DType::kF32);
  s.cases.push_back({"specials",
                     {x},
                     [](const std::vector<Array>& in) { return isfinite(in[0]); },
                     Expected{{5}, DType::kBool, {1, 0, 0, 0, 1}}});
  return s;
}
GRAFT_SPEC(Not) {
  Spec s = unary_spec(
      PrimitiveId::kNot, [](const Array& x) { return ~x; },
      [](double x) { return x != 0 ? 0.0 : 1.0; }, {DType::kBool}, 0, 2);
  Array x = make({0, 1, 5, -6}, {4}, DType::kI32);
  s.cases.push_back({"i32 bitwise",
                     {x},
                     [](const std::vector<Array>& in) { return ~in[0]; },
                     Expected{{4}, DType::kI32, {-1, -2, -6, 5}}});
  Array u = make({0, 255, 3}, {3}, DType::kU8);
  s.cases.push_back({"u8 bitwise",
                     {u},
                     [](const std::vector<Array>& in) { return ~in[0]; },
                     Expected{{3}, DType::kU8, {255, 0, 252}}});
  return s;
}

GRAFT_SPEC(Add) {
  return binary_spec(
      PrimitiveId::kAdd, [](const Array& a, const Array& b) { return a + b; },
      [](double a, double b) { return a + b; }, kNumeric, -5, 5);
}
GRAFT_SPEC(Sub) {
  return binary_spec(
      PrimitiveId::kSub, [](const Array& a, const Array& b) { return a - b; },
      [](double a, double b) { return a - b; }, kSigned, -5, 5);
}
GRAFT_SPEC(Mul) {
  return binary_spec(
      PrimitiveId::kMul, [](const Array& a, const Array& b) { return a * b; },
      [](double a, double b) { return a * b; }, kNumeric, -5, 5);
}
GRAFT_SPEC(Div) {
  Spec s = binary_spec(
      PrimitiveId::kDiv, [](const Array& a, const Array& b) { return a / b; },
      [](double a, double b) { return a / b; }, kFloats, 0.5, 4);
  // Integer lax.div truncates toward zero; x / 0 gives -1 (XLA), never a trap; jnp's
  // floor_divide then steps 5 // 0 down to -2.
  Array a = make({7, -7, 7, -7, 5, INT32_MIN}, {6}, DType::kI32);
  Array b = make({2, 2, -2, -2, 0, -1}, {6}, DType::kI32);
  s.cases.push_back({"i32 floor_divide",
                     {a, b},
                     [](const std::vector<Array>& in) { return floor_divide(in[0], in[1]); },
                     Expected{{6}, DType::kI32, {3, -4, -4, 3, -2, double(INT32_MIN)}}});
  s.cases.push_back({"int true divide promotes to f32",
                     {a, b},
                     [](const std::vector<Array>& in) {
                       return divide(slice(in[0], {0}, {4}), slice(in[1], {0}, {4}));
                     },
                     Expected{{4}, DType::kF32, {3.5, -3.5, -3.5, 3.5}}});
  add_jax_floor_divide_cases(s);
  return s;
}
GRAFT_SPEC(Rem) {
  Spec s = binary_spec(
      PrimitiveId::kRem, [](const Array& a, const Array& b) { return a % b; },
      [](double a, double b) {
        double r = std::fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
      },
      {DType::kF32, DType::kF64}, 0.5, 4);
  Array a = make({7, -7, 7, -7, 5}, {5}, DType::kI32);
  Array b = make({3, 3, -3, -3, 0}, {5}, DType::kI32);
  s.cases.push_back({"i32 remainder takes the divisor's sign; x % 0 = 0",
                     {a, b},
                     [](const std::vector<Array>& in) { return remainder(in[0], in[1]); },
                     Expected{{5}, DType::kI32, {1, 2, -2, -1, 0}}});
  add_jax_remainder_cases(s);
  return s;
}
GRAFT_SPEC(Pow) {
  Spec s = binary_spec(
      PrimitiveId::kPow, [](const Array& a, const Array& b) { return power(a, b); },
      [](double a, double b) { return std::pow(a, b); }, {DType::kF32, DType::kF64}, 0.2, 3,
      std::nullopt, 8);
  Array a = make({2, 3, -2, 1, -1, 5}, {6}, DType::kI32);
  Array b = make({10, 3, 3, -4, -3, 0}, {6}, DType::kI32);
  s.cases.push_back({"i32",
                     {a, b},
                     [](const std::vector<Array>& in) { return power(in[0], in[1]); },
                     Expected{{6}, DType::kI32, {1024, 27, -8, 1, -1, 1}}});
  return s;
}
GRAFT_SPEC(Max) {
  Spec s = binary_spec(
      PrimitiveId::kMax, [](const Array& a, const Array& b) { return maximum(a, b); },
      [](double a, double b) { return std::max(a, b); }, kAll, -5, 5);
  Array a = make({NAN, 1}, {2}, DType::kF32), b = make({1, NAN}, {2}, DType::kF32);
  s.cases.push_back({"nan propagates",
                     {a, b},
                     [](const std::vector<Array>& in) { return maximum(in[0], in[1]); },
                     Expected{{2}, DType::kF32, {NAN, NAN}}});
  return with_jax_edges(s);
}
GRAFT_SPEC(Min) {
  Spec s = binary_spec(
      PrimitiveId::kMin, [](const Array& a, const Array& b) { return minimum(a, b); },
      [](double a, double b) { return std::min(a, b); }, kAll, -5, 5);
  Array a = make({NAN, 1}, {2}, DType::kF32), b = make({1, NAN}, {2}, DType::kF32);
  s.cases.push_back({"nan propagates",
                     {a, b},
                     [](const std::vector<Array>& in) { return minimum(in[0], in[1]); },
                     Expected{{2}, DType::kF32, {NAN, NAN}}});
  return with_jax_edges(s);
}
GRAFT_SPEC(Eq) {
  return binary_spec(
      PrimitiveId::kEq, [](const Array& a, const Array& b) { return a == b; },
      [](double a, double b) { return double(a == b); }, kAll, -2, 2, DType::kBool);
}
GRAFT_SPEC(Ne) {
  return binary_spec(
      PrimitiveId::kNe, [](const Array& a, const Array& b) { return a != b; },
      [](double a, double b) { return double(a != b); }, kAll, -2, 2, DType::kBool);
}
GRAFT_SPEC(Lt) {
  return binary_spec(
      PrimitiveId::kLt, [](const Array& a, const Array& b) { return a < b; },
      [](double a, double b) { return double(a < b); }, kAll, -2, 2, DType::kBool);
}
GRAFT_SPEC(Le) {
  return binary_spec(
      PrimitiveId::kLe, [](const Array& a, const Array& b) { return a <= b; },
      [](double a, double b) { return double(a <= b); }, kAll, -2, 2, DType::kBool);
}
GRAFT_SPEC(Gt) {
  return binary_spec(
      PrimitiveId::kGt, [](const Array& a, const Array& b) { return a > b; },
      [](double a, double b) { return double(a > b); }, kAll, -2, 2, DType::kBool);
}
GRAFT_SPEC(Ge) {
  return binary_spec(
      PrimitiveId::kGe, [](const Array& a, const Array& b) { return a >= b; },
      [](double a, double b) { return double(a >= b); }, kAll, -2, 2, DType::kBool);
}

namespace {
double bit_and(double a, double b) { return double(int64_t(a) & int64_t(b)); }
double bit_or(double a, double b) { return double(int64_t(a) | int64_t(b)); }
double bit_xor(double a, double b) { return double(int64_t(a) ^ int64_t(b)); }
}  // namespace

GRAFT_SPEC(And) {
  Spec s = binary_spec(
      PrimitiveId::kAnd, [](const Array& a, const Array& b) { return a & b; }, bit_and,
      {DType::kBool, DType::kI32, DType::kU8}, 0, 100);
  Array a = make({0, 1, 1}, {3}, DType::kF32), b = make({1, 1, 0}, {3}, DType::kI32);
  s.cases.push_back({"logical_and converts to bool",
                     {a, b},
                     [](const std::vector<Array>& in) { return logical_and(in[0], in[1]); },
                     Expected{{3}, DType::kBool, {0, 1, 0}}});
  return s;
}
GRAFT_SPEC(Or) {
  return binary_spec(
      PrimitiveId::kOr, [](const Array& a, const Array& b) { return a | b; }, bit_or,
      {DType::kBool, DType::kI32, DType::kU32}, 0, 100);
}
GRAFT_SPEC(Xor) {
  return binary_spec(
      PrimitiveId::kXor, [](const Array& a, const Array& b) { return a ^ b; }, bit_xor,
      {DType::kBool, DType::kI64, DType::kU32}, 0, 100);
}
GRAFT_SPEC(ShiftLeft) {
  Spec s{PrimitiveId::kShiftLeft};
  Array a = make({1, 3, 0xFFFFFFFF, 5, 7}, {5}, DType::kU32);
  Array b = make({0, 4, 8, 31, 32}, {5}, DType::kU32);
  s.cases.push_back({"u32, shift >= width gives 0",
                     {a, b},
                     [](const std::vector<Array>& in) { return shift_left(in[0], in[1]); },
                     Expected{{5}, DType::kU32, {1, 48, 4294967040.0, 2147483648.0, 0}}});
  Array c = make({1, -1}, {2}, DType::kI64), d = make({40, 1}, {2}, DType::kI64);
  s.cases.push_back({"i64",
                     {c, d},
                     [](const std::vector<Array>& in) { return shift_left(in[0], in[1]); },
                     Expected{{2}, DType::kI64, {double(int64_t(1) << 40), -2}}});
  return s;
}
GRAFT_SPEC(ShiftRightLogical) {
  Spec s{PrimitiveId::kShiftRightLogical};
  Array a = make({256, 0xFFFFFFFF, 5}, {3}, DType::kU32);
  Array b = make({4, 9, 32}, {3}, DType::kU32);
  s.cases.push_back({"u32",
                     {a, b},
                     [](const std::vector<Array>& in) { return shift_right_logical(in[0], in[1]); },
                     Expected{{3}, DType::kU32, {16, 8388607, 0}}});
  Array c = make({-1}, {1}, DType::kI32), d = make({28}, {1}, DType::kI32);
  s.cases.push_back({"i32 fills zeros",
                     {c, d},
                     [](const std::vector<Array>& in) { return shift_right_logical(in[0], in[1]); },
                     Expected{{1}, DType::kI32, {15}}});
  return s;
}

GRAFT_SPEC(SelectN) {
  Spec s{PrimitiveId::kSelectN};
  for (DType d : {DType::kF32, DType::kBF16, DType::kI64, DType::kBool}) {
    Array c = random_array({2, 3}, DType::kBool, 1);
    Array x = random_array({2, 3}, d, 2, -4, 4), y = random_array({1, 3}, d, 3, -4, 4);
    std::vector<double> cv = values_of(c), xv = values_of(x), yv = values_of(y);
    Expected e{{2, 3}, d, {}};
    for (int i = 0; i < 6; ++i) e.values.push_back(cv[i] != 0 ? xv[i] : yv[i % 3]);
    s.cases.push_back({std::string(dtype_name(d)) + " where broadcast",
                       {c, x, y},
                       [](const std::vector<Array>& in) { return where(in[0], in[1], in[2]); },
                       e});
  }
  Array x = random_array({}, DType::kF32, 4);
  s.cases.push_back(
      {"scalar true",
       {x},
       [](const std::vector<Array>& in) { return where(Array(true), in[0], Array(0.0)); },
       Expected{{}, DType::kF32, values_of(x)}});
  s.cases.push_back(
      {"clip",
       {make({-3, 0.5, 7}, {3}, DType::kF32)},
       [](const std::vector<Array>& in) { return where(in[0] > 1.0, Array(1.0), in[0]); },
       Expected{{3}, DType::kF32, {-3, 0.5, 1}}});
  return s;
}

GRAFT_SPEC(ConvertElementType) {
  Spec s{PrimitiveId::kConvertElementType};
  std::vector<double> v = {-300.7, -2.5, -1.0, -0.4, 0.0, 0.6, 1.5, 2.5, 255.9, 70000.3, 3e9};
  for (DType from : kAll) {
    Array x = make(v, {static_cast<int64_t>(v.size())}, from);
    std::vector<double> xv = values_of(x);
    for (DType to : kAll) {
      if (from == to) continue;
      Expected e{x.shape(), to, {}};
      for (double a : xv) {
        double r;
        if (to == DType::kBool)
          r = a != 0;
        else if (is_integral(to) && is_floating(from)) {
          // Saturating float -> int (XLA).
          const double bits = 8.0 * dtype_size(to);
          double lo = is_unsigned(to) ? 0 : -std::exp2(bits - 1);
          double hi = is_unsigned(to) ? std::exp2(bits) - 1 : std::exp2(bits - 1) - 1;
          r = std::trunc(std::min(std::max(a, lo), hi));
        } else
          r = round_to(a, to);
        e.values.push_back(r);
      }
      Case c{std::string(dtype_name(from)) + "->" + dtype_name(to),
             {x},
             [to](const std::vector<Array>& in) { return astype(in[0], to); },
             e,
             0,
             0};
      if (is_floating(from) && is_floating(to)) {
        // Finite differences cannot see through these values: a step below the output's
        // resolution (narrowing), or below f32's at 7e4 and 3e9. The "moderate" cases below
        // are differentiated instead.
        c.skip_grad = "values or output dtype too coarse for finite differences";
      }
      s.cases.push_back(c);
    }
  }
  // Float -> float conversions FD can check: widening, at moderate magnitudes.
  for (auto [from, to] : {std::pair{DType::kF32, DType::kF64},
                          {DType::kBF16, DType::kF32},
                          {DType::kF16, DType::kF64}}) {
    Array x = random_array({2, 3}, from, 17, -2, 2);
    Expected e{{2, 3}, to, values_of(x)};
    s.cases.push_back({std::string(dtype_name(from)) + "->" + dtype_name(to) + " moderate",
                       {x},
                       [to](const std::vector<Array>& in) { return astype(in[0], to); },
                       e});
  }
  // Through a computation: d/dx astype(x * x, f64) at f32 x.
  Array m = random_array({4}, DType::kF32, 18, -2, 2);
  Expected me{{4}, DType::kF64, {}};
  for (double v : values_of(m)) me.values.push_back(round_to(v * v, DType::kF32));
  s.cases.push_back(
      {"f32 square -> f64",
       {m},
       [](const std::vector<Array>& in) { return astype(in[0] * in[0], DType::kF64); },
       me});
  Array nan = make({NAN, INFINITY, -INFINITY}, {3}, DType::kF32);
  s.cases.push_back({"nan/inf to i32",
                     {nan},
                     [](const std::vector<Array>& in) { return astype(in[0], DType::kI32); },
                     Expected{{3}, DType::kI32, {0, double(INT32_MAX), double(INT32_MIN)}}});
  add_jax_promotion_cases(s);
  return s;
}

GRAFT_SPEC(BitcastConvertType) {
  Spec s{PrimitiveId::kBitcastConvertType};
  Array x = make({1.0, -2.0, 0.5}, {3}, DType::kF32);
  s.cases.push_back(
      {"f32 -> u32",
       {x},
       [](const std::vector<Array>& in) { return bitcast_convert_type(in[0], DType::kU32); },
       Expected{{3}, DType::kU32, {0x3f800000, 0xc0000000, 0x3f000000}}});
  Array u = make({0x3f800000, 0x40490fdb}, {2}, DType::kU32);
  s.cases.push_back(
      {"u32 -> f32",
       {u},
       [](const std::vector<Array>& in) { return bitcast_convert_type(in[0], DType::kF32); },
       Expected{{2}, DType::kF32, {1.0, double(3.14159274101257324f)}}});
  Array h = make({1.0, -2.0}, {2}, DType::kF64);
  s.cases.push_back(
      {"f64 -> i64",
       {h},
       [](const std::vector<Array>& in) { return bitcast_convert_type(in[0], DType::kI64); },
       Expected{{2}, DType::kI64, {4607182418800017408.0, -4611686018427387904.0}}});
  return s;
}

GRAFT_SPEC(StopGradient) {
  Spec s{PrimitiveId::kStopGradient};
  for (DType d : {DType::kF32, DType::kBF16, DType::kI32}) {
    Array x = random_array({2, 3}, d, 5);
    Case c{std::string(dtype_name(d)) + " identity on values",
           {x},
           [](const std::vector<Array>& in) { return stop_gradient(in[0]); },
           Expected{{2, 3}, d, values_of(x)}};
    // Its derivative is zero by definition, not that of its values (the identity): checked
    // in tests/transforms/autodiff_test.cc instead of against finite differences.
    c.skip_grad = "derivative is zero by definition (tests/transforms/autodiff_test.cc)";
    s.cases.push_back(c);
  }
  return s;
}

}  // namespace graft::spec
