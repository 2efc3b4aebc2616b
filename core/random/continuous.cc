// Continuous samplers of jax.random that transform one uniform or normal draw (exponential,
// laplace, logistic, cauchy, rayleigh, weibull_min, pareto, maxwell, double_sided_maxwell,
// lognormal, triangular, wald), each written as JAX 0.10.2 writes it (jax/_src/random/core.py)
// so that the same key gives the same values: same draws, same op order.
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/ops.h"
#include "core/lax/exact_fma.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

namespace internal {

Shape param_shape(std::string_view op, const std::optional<Shape>& shape,
                  std::initializer_list<const Array*> params) {
  Shape b;
  for (const Array* p : params) {
    if (!p->valid()) fail(op, "got an empty Array handle as a parameter");
    b = broadcast_shapes(op, b, p->shape());
  }
  if (!shape) return b;
  check_shape(op, *shape);
  Shape all = *shape;
  for (const Array* p : params) {
    if (p->ndim() > static_cast<int64_t>(shape->size())) {
      all = b;  // reported below
      break;
    }
    all = broadcast_shapes(op, all, p->shape());
  }
  if (all != *shape) {
    fail(op, "parameter shapes must broadcast into the shape argument ", shape_str(*shape),
         ", got ", shape_str(b));
  }
  return *shape;
}

Array param(std::string_view op, const Array& p, DType dtype) {
  if (!p.valid()) fail(op, "got an empty Array handle as a parameter");
  if (!is_floating(p.dtype()) && !is_integral(p.dtype())) {
    fail(op, "parameters must be real numbers, got ", p.aval().str());
  }
  return astype(p, dtype);
}

}  // namespace internal

using namespace internal;  // NOLINT: the family's own helpers

namespace {

void check(std::string_view op, const Array& key, const Shape& shape, DType dtype) {
  check_key(op, key);
  check_shape(op, shape);
  check_float(op, dtype);
}

Array k(double v, DType dtype) { return scalar(v, dtype); }

}  // namespace

Array exponential(const Array& key, const Shape& shape, DType dtype) {
  check("exponential", key, shape, dtype);
  // -log1p(-u): the domain of log moves to (0, 1].
  return -log1p(-unit_float(key, shape, dtype));
}

Array laplace(const Array& key, const Shape& shape, DType dtype) {
  check("laplace", key, shape, dtype);
  // uniform(-1 + epsneg, 1): -1 + epsneg is the float after -1.
  Array u = uniform(key, shape, dtype, next_toward(-1.0, dtype, 0.0), 1.0);
  return sign(u) * log1p(-abs(u));
}

Array logistic(const Array& key, const Shape& shape, DType dtype) {
  check("logistic", key, shape, dtype);
  Array x = uniform_tiny_to_one(key, shape, dtype);
  return log(x) - log1p(-x);
}

Array cauchy(const Array& key, const Shape& shape, DType dtype) {
  check("cauchy", key, shape, dtype);
  double eps = next_toward(1.0, dtype, 2.0) - 1.0;
  Array u = uniform(key, shape, dtype, eps, 1.0);
  return tan(k(std::numbers::pi, dtype) * (u - k(0.5, dtype)));
}

Array rayleigh(const Array& key, const Array& scale, OptShape shape, DType dtype) {
  check_key("rayleigh", key);
  check_float("rayleigh", dtype);
  Shape s = param_shape("rayleigh", shape, {&scale});
  Array sc = broadcast_to(param("rayleigh", scale, dtype), s);
  Array log_u = log(unit_float(key, s, dtype));
  return sc * sqrt(log_u * k(-2, dtype));
}

Array weibull_min(const Array& key, const Array& scale, const Array& concentration,
                  const Shape& shape, DType dtype) {
  check("weibull_min", key, shape, dtype);
  param("weibull_min", scale, dtype);
  param("weibull_min", concentration, dtype);
  Array u = unit_float(key, shape, dtype);
  // 1.0 / concentration in the parameter's own type (a C++ double divides in f64, like a
  // Python float in JAX), then power and scale in dtype.
  Array inv = astype(Array(1.0) / concentration, dtype);
  return power(-log1p(-u), inv) * astype(scale, dtype);
}

Array pareto(const Array& key, const Array& b, OptShape shape, DType dtype) {
  check_key("pareto", key);
  check_float("pareto", dtype);
  Shape s = param_shape("pareto", shape, {&b});
  Array bb = param("pareto", b, dtype);
  return exp(exponential(key, s, dtype) / bb);
}

Array maxwell(const Array& key, const Shape& shape, DType dtype) {
  check("maxwell", key, shape, dtype);
  Shape s = shape;
  s.push_back(3);
  Array n = normal(key, s, dtype);
  return sqrt(sum(n * n, {-1}));  // jnp.linalg.norm(n, axis=-1)
}

Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale,
                           const Shape& shape, DType dtype) {
  check("double_sided_maxwell", key, shape, dtype);
  Shape params = param_shape("double_sided_maxwell", std::nullopt, {&loc, &scale});
  // JAX: an empty shape becomes the parameters' shape, then the parameters' shape is
  // appended (so non-scalar parameters with shape () give params + params).
  Shape s = shape.empty() ? params : shape;
  s.insert(s.end(), params.begin(), params.end());
  Array keys = random::split(key, 2);
  Array m = maxwell(key_at(keys, 0), s, dtype);
  Array sign = rademacher(key_at(keys, 1), s, dtype);
  Array prod = sign * m;
  Array sc = broadcast_to(param("double_sided_maxwell", scale, dtype), s);
  Array lc = broadcast_to(param("double_sided_maxwell", loc, dtype), s);
  // XLA:CPU fuses the multiply-add into one FMA.
  if (dtype == DType::kF32 || dtype == DType::kF64) return graft::detail::fma(prod, sc, lc);
  return prod * sc + lc;
}

Array lognormal(const Array& key, const Array& sigma, OptShape shape, DType dtype) {
  check_key("lognormal", key);
  check_float("lognormal", dtype);
  Shape s = param_shape("lognormal", shape, {&sigma});
  return exp(normal(key, s, dtype) * param("lognormal", sigma, dtype));
}

Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right,
                 OptShape shape, DType dtype) {
  check_key("triangular", key);
  check_float("triangular", dtype);
  Shape s = param_shape("triangular", shape, {&left, &mode, &right});
  Array l = broadcast_to(param("triangular", left, dtype), s);
  Array r = broadcast_to(param("triangular", right, dtype), s);
  Array m = broadcast_to(param("triangular", mode, dtype), s);
  Array fc = (m - l) / (r - l);
  Array u = unit_float(key, s, dtype);
  Array out1 = l + sqrt(u * (r - l) * (m - l));
  Array out2 = r - sqrt((k(1, dtype) - u) * (r - l) * (r - m));
  return where(u < fc, out1, out2);
}

Array wald(const Array& key, const Array& mean, OptShape shape, DType dtype) {
  check_key("wald", key);
  check_float("wald", dtype);
  Shape s = param_shape("wald", shape, {&mean});
  Array mu = broadcast_to(param("wald", mean, dtype), s);
  Array keys = random::split(key, 2);
  Array v = normal(key_at(keys, 0), s, dtype);
  Array z = unit_float(key_at(keys, 1), s, dtype);
  Array y = v * v;
  Array y_sq = y * y;
  Array mean_sq = mu * mu;
  Array sqrt_term = sqrt(k(4, dtype) * mu * y + mean_sq * y_sq);
  Array t = mu + mean_sq * y / k(2, dtype);
  // XLA:CPU contracts the last multiply-subtract into an FMA (the other contractions it makes
  // here are not reproduced: a few ulp, see tests/core/random/random_dist_test.cc).
  Array x = (dtype == DType::kF32 || dtype == DType::kF64)
                ? graft::detail::fma(-(mu / k(2, dtype)), sqrt_term, t)
                : t - mu / k(2, dtype) * sqrt_term;
  return where(z <= mu / (mu + x), x, mean_sq / x);
}

}  // namespace graft::random
