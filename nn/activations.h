// Activation functions and the other jax.nn functions, with jax.nn's names, parameters and
// defaults (JAX 0.10.2, jax/_src/nn/functions.py). Elementwise ones keep the input's dtype
// (C++ scalars such as alpha are weakly typed, as Python floats are in JAX).
//
// Each is composed from core/ops.h in the form JAX uses, so grad, vmap and jit see ordinary
// ops and the derivatives are JAX's, kinks included: maximum / minimum split a tie's gradient
// in half (lax.max), `where` sends it to the branch taken. relu, relu6, softplus (JAX's
// logaddexp) and log1mexp carry JAX's custom_jvp rules (graft::custom_jvp), so relu'(0) = 0,
// relu6'(0) = relu6'(6) = 0, softplus'(x) = exp(x - softplus(x)).
//
// Errors: graft::Error "[glu] ..." and the like for a bad axis or shape, at the call.
// The where=/initial= masking arguments of jax.nn.softmax and friends are not provided.
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"
#include "core/ops.h"

namespace graft::nn {

// ---- elementwise
Array identity(const Array& x);
// max(x, 0); gradient 0 at x = 0 (JAX's custom_jvp).
Array relu(const Array& x);
// min(max(x, 0), 6); gradient 1 on (0, 6), 0 elsewhere (JAX's custom_jvp).
Array relu6(const Array& x);
using graft::sigmoid;  // lax.logistic
// log(1 + e^x) = logaddexp(x, 0).
Array softplus(const Array& x);
// x / (|x| + 1).
Array soft_sign(const Array& x);
// -softplus(-x).
Array log_sigmoid(const Array& x);
// x * sigmoid(x) (a.k.a. swish), the gate of SwiGLU.
Array silu(const Array& x);
Array swish(const Array& x);
// x * tanh(softplus(x)).
Array mish(const Array& x);
// x if x >= 0 else negative_slope * x.
Array leaky_relu(const Array& x, double negative_slope = 0.01);
// x if x > 0 else alpha * expm1(x).
Array elu(const Array& x, double alpha = 1.0);
// max(x, 0) + alpha * expm1(min(x, 0) / alpha).
Array celu(const Array& x, double alpha = 1.0);
// scale * elu(x, alpha) with SELU's fixed alpha = 1.6732632... and scale = 1.0507009...
Array selu(const Array& x);
// approximate = true: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (jax.nn.gelu's
// default); false: the exact 0.5 x (1 + erf(x / sqrt(2))).
Array gelu(const Array& x, bool approximate = true);
// relu6(x + 3) / 6.
Array hard_sigmoid(const Array& x);
// x * hard_sigmoid(x); hard_swish is the same function.
Array hard_silu(const Array& x);
Array hard_swish(const Array& x);
// clip to [-1, 1] (with `where`, so the gradient at +-1 is 1, as in JAX).
Array hard_tanh(const Array& x);
// (x + sqrt(x^2 + b)) / 2.
Array squareplus(const Array& x, double b = 4.0);
// 0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between.
Array sparse_plus(const Array& x);
// 0.5 * clip(x + 1, 0, 2).
Array sparse_sigmoid(const Array& x);
// log(1 - exp(-x)) for x > 0, stable at both ends; gradient 1 / expm1(x) (custom_jvp).
Array log1mexp(const Array& x);

// ---- along axes
// Splits x in two halves along `axis` (its size must be even): first * sigmoid(second).
Array glu(const Array& x, int64_t axis = -1);
// One axis: core/ops.h's softmax / log_softmax. `axes` (empty: all axes): the max-shifted
// forms of jax.nn.softmax / log_softmax over several axes at once.
using graft::log_softmax;
using graft::softmax;
Array softmax(const Array& x, const Axes& axes);
Array log_softmax(const Array& x, const Axes& axes);
// jax.nn.softmax / log_softmax with where=: only the elements where `where` (bool, broadcast
// against x) is true take part; the others give 0 (softmax) or -inf (log_softmax). A slice
// with none taking part gives those values throughout.
Array softmax(const Array& x, const Axes& axes, const Array& where);
Array softmax(const Array& x, int64_t axis, const Array& where);
Array log_softmax(const Array& x, const Axes& axes, const Array& where);
Array log_softmax(const Array& x, int64_t axis, const Array& where);
using graft::logsumexp;  // (x, axes = all, keepdims = false)
// jax.nn.logsumexp's other arguments: log(sum(b * exp(x))) over `axes` (empty: all), b and
// where broadcast against x (where: the elements taking part). Without a sign, a negative
// sum gives NaN (as JAX's); logsumexp_with_sign is return_sign=True.
struct LogSumExpOptions {
  Axes axes = {};
  bool keepdims = false;
  std::optional<Array> b = std::nullopt;
  std::optional<Array> where = std::nullopt;
};
Array logsumexp(const Array& x, const LogSumExpOptions& options);
// return_sign=True: (log|sum(b exp(x))|, sign of the sum: -1, 0 or 1).
std::pair<Array, Array> logsumexp_with_sign(const Array& x, const LogSumExpOptions& options);
// logsumexp(x) - log(number of elements reduced).
Array logmeanexp(const Array& x, const Axes& axes = {}, bool keepdims = false);
// (x - mean) * rsqrt(variance + epsilon) over `axes` (empty: all axes), with JAX's default
// "fast" variance max(mean(x^2) - mean(x)^2, 0). `mean` / `variance`, when given, are used
// instead of the computed ones (they must broadcast against x with the axes kept).
Array standardize(const Array& x, const Axes& axes = {-1},
                  const std::optional<Array>& mean = std::nullopt,
                  const std::optional<Array>& variance = std::nullopt, double epsilon = 1e-5);
using graft::one_hot;  // (indices, num_classes, dtype = f32, axis = -1)

}  // namespace graft::nn
