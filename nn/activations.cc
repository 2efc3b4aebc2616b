#include "nn/activations.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "transforms/autodiff.h"
#include "transforms/custom_derivatives.h"

namespace graft::nn {
namespace {

using Unary = std::tuple<Array>;

// lax.select(x > 0, g, 0): the tangent passes only where x > 0.
const auto relu_fn = custom_jvp(
    // jnp.maximum(x, 0) with an integer 0: an integer x stays integer, as in JAX.
    [](const Array& x) { return graft::maximum(x, 0); },
    [](const Unary& p, const Unary& t) {
      const Array& x = std::get<0>(p);
      const Array& g = std::get<0>(t);
      return std::pair{graft::maximum(x, 0), where(x > 0, g, zeros_like(g))};
    },
    "relu");

const auto relu6_fn =
    custom_jvp([](const Array& x) { return graft::minimum(graft::maximum(x, 0.0), 6.0); },
               [](const Unary& p, const Unary& t) {
                 const Array& x = std::get<0>(p);
                 const Array& g = std::get<0>(t);
                 return std::pair{graft::minimum(graft::maximum(x, 0.0), 6.0),
                                  where(logical_and(x > 0.0, x < 6.0), g, zeros_like(g))};
               },
               "relu6");

// jnp.logaddexp(x, 0) (lax_other.logaddexp with x2 = 0): NaN stays NaN. JAX's custom_jvp
// multiplies the tangent by exp(x - out) (infinities replaced by 0), where out is logaddexp
// itself, so its own derivative is again exp(x - out). That factor is sigmoid(x); written as
// sigmoid, the rule differentiates to JAX's second derivative s (1 - s) (exp(x - out) of the
// plain-op primal would not: at 0 the kinks of max and abs give out' = 0, not 1/2).
Array softplus_primal(const Array& x) {
  return where(isnan(x), x, graft::maximum(x, 0.0) + log1p(exp(-abs(x))));
}
const auto softplus_fn =
    custom_jvp([](const Array& x) { return softplus_primal(x); },
               [](const Unary& p, const Unary& t) {
                 const Array& x = std::get<0>(p);
                 return std::pair{softplus_primal(x), std::get<0>(t) * sigmoid(x)};
               },
               "softplus");

Array log1mexp_primal(const Array& x) {
  return where(x < std::log(2.0), log(-expm1(-x)), log1p(-exp(-x)));
}
const auto log1mexp_fn =
    custom_jvp([](const Array& x) { return log1mexp_primal(x); },
               [](const Unary& p, const Unary& t) {
                 const Array& x = std::get<0>(p);
                 return std::pair{log1mexp_primal(x), std::get<0>(t) / expm1(x)};
               },
               "log1mexp");

}  // namespace

Array identity(const Array& x) { return x; }
Array relu(const Array& x) { return relu_fn(x); }
Array relu6(const Array& x) { return relu6_fn(x); }
Array softplus(const Array& x) { return softplus_fn(x); }
Array soft_sign(const Array& x) { return x / (abs(x) + 1.0); }
Array log_sigmoid(const Array& x) { return -softplus(-x); }
Array silu(const Array& x) { return x * sigmoid(x); }
Array swish(const Array& x) { return silu(x); }
Array mish(const Array& x) { return x * tanh(softplus(x)); }

Array leaky_relu(const Array& x, double negative_slope) {
  return where(x >= 0.0, x, negative_slope * x);
}

Array elu(const Array& x, double alpha) {
  // The inner where keeps expm1 of large positive x (and its gradient) out of the result.
  return where(x > 0.0, x, alpha * expm1(where(x > 0.0, Array(0.0), x)));
}

Array celu(const Array& x, double alpha) {
  return graft::maximum(x, 0.0) + alpha * expm1(graft::minimum(x, 0.0) / alpha);
}

Array selu(const Array& x) {
  const double alpha = 1.6732632423543772848170429916717;
  const double scale = 1.0507009873554804934193349852946;
  return scale * elu(x, alpha);
}

Array gelu(const Array& x, bool approximate) {
  if (approximate) {
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + erf(x * (1.0 / std::sqrt(2.0))));
}

Array hard_sigmoid(const Array& x) { return relu6(x + 3.0) / 6.0; }
Array hard_silu(const Array& x) { return x * hard_sigmoid(x); }
Array hard_swish(const Array& x) { return hard_silu(x); }

Array hard_tanh(const Array& x) {
  return where(x > 1.0, Array(1.0), where(x < -1.0, Array(-1.0), x));
}

Array squareplus(const Array& x, double b) { return (x + sqrt(square(x) + b)) / 2.0; }

Array sparse_plus(const Array& x) {
  return where(x <= -1.0, Array(0.0), where(x >= 1.0, x, square(x + 1.0) / 4.0));
}

Array sparse_sigmoid(const Array& x) {
  // jnp.clip(v, 0, 2) = minimum(maximum(v, 0), 2): ties split the gradient like lax.max.
  return 0.5 * graft::minimum(graft::maximum(x + 1.0, 0.0), 2.0);
}

Array log1mexp(const Array& x) { return log1mexp_fn(x); }

Array glu(const Array& x, int64_t axis) {
  const int64_t rank = int64_t(x.shape().size());
  if (axis < -rank || axis >= rank) fail("glu", "axis ", axis, " out of range for rank ", rank);
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (x.shape()[a] % 2 != 0) {
    fail("glu", "axis ", axis, " has odd size ", x.shape()[a], " in ", shape_str(x.shape()));
  }
  std::vector<Array> halves = graft::split(x, 2, a);
  return halves[0] * sigmoid(halves[1]);
}

Array softmax(const Array& x, const Axes& axes) {
  Array unnormalized = exp(x - stop_gradient(graft::max(x, axes, /*keepdims=*/true)));
  return unnormalized / sum(unnormalized, axes, /*keepdims=*/true);
}

Array log_softmax(const Array& x, const Axes& axes) {
  Array shifted = x - stop_gradient(graft::max(x, axes, /*keepdims=*/true));
  return shifted - log(sum(exp(shifted), axes, /*keepdims=*/true));
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Array mask_for(const char* op, const Array& x, const Array& where) {
  if (where.dtype() != DType::kBool) fail(op, "where must be bool, got ", where.dtype());
  return broadcast_to(where, x.shape());
}

}  // namespace

// As JAX 0.10.2's _softmax: the max over the elements taking part (-inf initial), exp of the
// masked x shifted by it, divided by the masked sum; masked-out elements set to 0.
Array softmax(const Array& x, const Axes& axes, const Array& where) {
  const Array m = mask_for("softmax", x, where);
  const Array xs = graft::where(m, x, full_like(x, -kInf));
  const Array x_max = stop_gradient(graft::max(xs, axes, /*keepdims=*/true));
  const Array unnormalized = exp(xs - x_max);
  const Array total = sum(graft::where(m, unnormalized, zeros_like(unnormalized)), axes, true);
  const Array result = unnormalized / total;
  return graft::where(m, result, zeros_like(result));
}
Array softmax(const Array& x, int64_t axis, const Array& where) {
  return softmax(x, Axes{axis}, where);
}

Array log_softmax(const Array& x, const Axes& axes, const Array& where) {
  const Array m = mask_for("log_softmax", x, where);
  const Array xs = graft::where(m, x, full_like(x, -kInf));
  const Array shifted = xs - stop_gradient(graft::max(xs, axes, /*keepdims=*/true));
  const Array e = exp(shifted);
  const Array result = shifted - log(sum(graft::where(m, e, zeros_like(e)), axes, true));
  return graft::where(m, result, full_like(result, -kInf));
}
Array log_softmax(const Array& x, int64_t axis, const Array& where) {
  return log_softmax(x, Axes{axis}, where);
}

// As jax._src.ops.special.logsumexp: x where b == 0 becomes -inf; the finite max (0 where
// none) shifts exp; the sign is that of the scaled sum, whose magnitude's log is the value.
std::pair<Array, Array> logsumexp_with_sign(const Array& x, const LogSumExpOptions& o) {
  constexpr const char* op = "logsumexp";
  Array a = x, b;
  if (o.b) {
    if (is_complex(x.dtype()) || is_complex(o.b->dtype())) fail(op, "b with complex values");
    // promote_args_inexact: the common dtype, made floating; then broadcast together.
    DType d = result_type({x, *o.b});
    if (!is_floating(d)) d = DType::kF32;
    const Shape shape = broadcast_shapes({x.shape(), o.b->shape()});
    a = broadcast_to(astype(x, d), shape);
    b = broadcast_to(astype(*o.b, d), shape);
    a = graft::where(not_equal(b, 0.0), a, full_like(a, -kInf));
  } else {
    if (is_complex(x.dtype())) fail(op, "the options form takes real x");
    a = is_floating(x.dtype()) ? x : astype(x, DType::kF32);
  }
  std::optional<Array> m;
  if (o.where) m = mask_for(op, a, *o.where);
  const Array a_in = m ? graft::where(*m, a, full_like(a, -kInf)) : a;
  Array amax = graft::max(a_in, o.axes, /*keepdims=*/true);
  amax = stop_gradient(graft::where(isfinite(amax), amax, zeros_like(amax)));
  Array e = exp(a - amax);
  if (o.b) e = e * b;
  if (m) e = graft::where(*m, e, zeros_like(e));
  const Array total = sum(e, o.axes, o.keepdims);
  const Array out = log(abs(total)) + reshape(amax, total.shape());
  const Array sign = graft::sign(total);
  return {out, sign};
}

Array logsumexp(const Array& x, const LogSumExpOptions& o) {
  auto [out, sign] = logsumexp_with_sign(x, o);
  if (!o.b) return out;
  return graft::where(less(sign, 0.0), full_like(out, std::nan("")), out);
}

Array logmeanexp(const Array& x, const Axes& axes, bool keepdims) {
  Array lse = logsumexp(x, axes, keepdims);
  double count = 1;
  const int64_t rank = int64_t(x.shape().size());
  if (axes.empty()) {
    for (int64_t d : x.shape()) count *= double(d);
  } else {
    for (int64_t a : axes) count *= double(x.shape()[a < 0 ? a + rank : a]);
  }
  return lse - std::log(count);
}

Array standardize(const Array& x, const Axes& axes, const std::optional<Array>& mean_in,
                  const std::optional<Array>& variance_in, double epsilon) {
  Array m = mean_in ? *mean_in : graft::mean(x, axes, /*keepdims=*/true);
  Array v;
  if (variance_in) {
    v = *variance_in;
  } else {
    // JAX's default algorithm="fast": E[x^2] - E[x]^2, clipped at 0 (jnp.clip = maximum).
    v = graft::maximum(graft::mean(square(x), axes, /*keepdims=*/true) - square(m), 0.0);
  }
  return (x - m) * rsqrt(v + epsilon);
}

}  // namespace graft::nn
