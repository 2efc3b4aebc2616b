#!/usr/bin/env python3
"""Record JAX's results for graft's complex cases of jax.numpy's elementwise functions,
comparisons, reductions, sorting and gathers / scatters (core/lax/complex_math.cc,
core/lax/complex_reduce.cc).

As tools/make_jnp_fft_vectors.py: the vector format holds real arrays only, so a complex
result is recorded as stack([real, imag], -1) (ri()) and a complex input is built from two real
inputs with lax.complex (cx()); gradients are then those of a real function of real inputs,
through JAX's rules for complex values.

Runs JAX 0.10.2 on CPU (x64 off) on fixed inputs and writes
tests/core/testdata/complex_math_vectors.txt, read by tests/core/lax/complex_math_test.cc, in the
format of tools/make_jnp_array_vectors.py (whose writer this reuses): <case>.in<k> inputs
(float32, seeded standard normal), <case>.out0 JAX's output and, for the cases marked with
gradients, <case>.ct (a fixed cotangent) and <case>.grad<k> = d sum(out0 * ct) / d in<k>.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_complex_math_vectors.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_jnp_array_vectors as base  # noqa: E402  (sets JAX_PLATFORMS=cpu first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

OUT = os.path.join(base.ROOT, "tests", "core", "testdata", "complex_math_vectors.txt")
cx = jax.lax.complex


def ri(y):
  """A complex result as [..., 2] real and imaginary parts; a real one as it is."""
  return jnp.stack([jnp.real(y), jnp.imag(y)], -1) if jnp.iscomplexobj(y) else y


def unary(f, scale=1.0):
  """f of complex(a, b) * scale, over (2, 5) parts, with gradients."""
  return (lambda a, b: ri(f(cx(a, b) * scale)), [(2, 5), (2, 5)], True)


def ties_of(a, b):
  """As ties(), at half the scale: rounded parts of complex(a, b) * 2, halved."""
  return cx(jnp.round(a * 2), jnp.round(b * 2)) * 0.5


def ties(a, b):
  """Rounded parts, so comparisons and sorts meet equal real parts."""
  return cx(jnp.round(a), jnp.round(b))


# Points on and beside the negative real axis, imaginary parts +0 and -0.
CUT_RE = jnp.array([-1, -1, -4, 1, 0.5, -0.5, 0, -0.0, -2], jnp.float32)
CUT_IM = jnp.array([0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -3], jnp.float32)


INF, NAN = float("inf"), float("nan")
# Denominators stay normal floats: JAX on CPU flushes subnormals to zero, graft keeps them.
DIV_A = [(1, 1), (1e-30, 1e-30), (3, 4), (INF, 1), (1, -INF), (NAN, 1), (0, 0), (-2, 5)]
DIV_B = [(1e30, 1e30), (1e-30, -1e-30), (0, 0), (-0.0, 0), (INF, 2), (2, -INF), (1, 2), (NAN, 0),
         (3e38, 3e38), (2e-38, 0), (0, -0.0)]


def div_parts(values, times, outer):
  """The real and imaginary parts of `values`, each repeated `times` times (outer: as the
  outer loop of the grid, else as the inner one)."""
  v = np.array(values, np.float32)
  v = np.repeat(v, times, axis=0) if outer else np.tile(v, (times, 1))
  return jnp.asarray(v[:, 0]), jnp.asarray(v[:, 1])


@jax.custom_jvp
def arccosh(z):
  return jnp.arccosh(z)


# JAX 0.10.2's arccosh jvp, g * rsqrt((z - 1) (z + 1)), takes the other square root where
# Re z < 0, so its complex gradient has the wrong sign there (central differences of
# np.arccosh agree with 1 / (sqrt(z - 1) sqrt(z + 1)), not with it). The recorded gradient uses
# the derivative of the value JAX computes.
@arccosh.defjvp
def _arccosh_jvp(primals, tangents):
  (z,), (t,) = primals, tangents
  return jnp.arccosh(z), t / (jnp.sqrt(z - 1) * jnp.sqrt(z + 1))


def with_nans(a, b):
  """complex(a, b) with NaN real parts where a > 0.8."""
  return cx(jnp.where(a > 0.8, jnp.nan, a), b)


IN = jnp.array([0.0, np.inf, -np.inf, np.nan], jnp.float32)

CASES = {
    # elementwise functions (scaled where poles or growth would make f32 gradients huge)
    "sign": unary(jnp.sign),
    "sqrt": unary(jnp.sqrt),
    "rsqrt": unary(jax.lax.rsqrt),
    "log": unary(jnp.log),
    "log1p": unary(jnp.log1p, 0.5),
    "expm1": unary(jnp.expm1),
    "sin": unary(jnp.sin),
    "cos": unary(jnp.cos),
    "tan": unary(jnp.tan, 0.5),
    "sinh": unary(jnp.sinh),
    "cosh": unary(jnp.cosh),
    "tanh": unary(jnp.tanh, 0.5),
    "arcsin": unary(jnp.arcsin),
    "arccos": unary(jnp.arccos),
    "arctan": unary(jnp.arctan, 0.5),
    "arcsinh": unary(jnp.arcsinh),
    "arccosh": unary(arccosh),
    "arctanh": unary(jnp.arctanh, 0.5),
    "log2": unary(jnp.log2),
    "log10": unary(jnp.log10),
    "exp2": unary(jnp.exp2),
    "reciprocal": unary(jnp.reciprocal),
    "sigmoid": unary(jax.nn.sigmoid, 0.5),
    "sinc": unary(jnp.sinc, 0.5),
    "square": unary(jnp.square),
    "exp": unary(jnp.exp),
    "deg2rad": unary(jnp.deg2rad),
    "round": (lambda a, b: ri(jnp.round(cx(a, b) * 2.0)), [(2, 5), (2, 5)], False),
    "rint": (lambda a, b: ri(jnp.rint(cx(a, b) * 2.0)), [(2, 5), (2, 5)], False),
    "sqrt_real_axis": (lambda a: ri(jnp.sqrt(cx(a, jnp.zeros_like(a)))), [(7,)], False),
    "log_real_axis": (lambda a: ri(jnp.log(cx(a, jnp.zeros_like(a)))), [(7,)], False),
    "isfinite": (lambda a: jnp.isfinite(cx(IN[:, None] + a, IN[None, :] + a)), [()], False),
    "isnan": (lambda a: jnp.isnan(cx(IN[:, None] + a, IN[None, :] + a)), [()], False),
    "isinf": (lambda a: jnp.isinf(cx(IN[:, None] + a, IN[None, :] + a)), [()], False),
    "nan_to_num": (lambda a: ri(jnp.nan_to_num(cx(IN[:, None] + a, IN[None, :] + a))), [()],
                   False),
    # power
    "power_complex": (lambda a, b, c, d: ri(cx(a, b) ** cx(c, d)),
                      [(2, 4), (2, 4), (2, 4), (2, 4)], True),
    "power_int": (lambda a, b: ri(cx(a, b) ** 3), [(2, 4), (2, 4)], True),
    "power_neg_int": (lambda a, b: ri(cx(a, b) ** -2), [(2, 4), (2, 4)], True),
    "power_real": (lambda a, b: ri(jnp.power(cx(a, b), 2.5)), [(2, 4), (2, 4)], True),
    "power_real_base": (lambda a, b, c: ri(jnp.power(jnp.abs(a) + 0.5, cx(b, c))),
                        [(6,), (6,), (6,)], True),
    "float_power": (lambda a, b, c: ri(jnp.float_power(cx(a, b), c)), [(6,), (6,), (6,)],
                    True),
    # comparisons (lexicographic) and max / min
    "equal": (lambda a, b, c, d: jnp.equal(ties(a, b), ties(c, d)),
              [(4, 6), (4, 6), (4, 6), (4, 6)], False),
    "not_equal": (lambda a, b, c, d: jnp.not_equal(ties(a, b), ties(c, d)),
                  [(4, 6), (4, 6), (4, 6), (4, 6)], False),
    "less": (lambda a, b, c, d: jnp.less(ties(a, b), ties(c, d)),
             [(4, 6), (4, 6), (4, 6), (4, 6)], False),
    "less_equal": (lambda a, b, c, d: jnp.less_equal(ties(a, b), ties(c, d)),
                   [(4, 6), (4, 6), (4, 6), (4, 6)], False),
    "greater": (lambda a, b, c, d: jnp.greater(ties(a, b), ties(c, d)),
                [(4, 6), (4, 6), (4, 6), (4, 6)], False),
    "greater_equal": (lambda a, b, c, d: jnp.greater_equal(ties(a, b), ties(c, d)),
                      [(4, 6), (4, 6), (4, 6), (4, 6)], False),
    "maximum": (lambda a, b, c, d: ri(jnp.maximum(cx(a, b), cx(c, d))),
                [(2, 5), (2, 5), (2, 5), (2, 5)], True),
    "minimum": (lambda a, b, c, d: ri(jnp.minimum(cx(a, b), cx(c, d))),
                [(2, 5), (2, 5), (2, 5), (2, 5)], True),
    "isclose": (lambda a, b: jnp.isclose(cx(a, b), cx(a, b) + cx(b, a) * jnp.array(
        [0.0, 1e-7, 1e-3], jnp.float32)[jnp.arange(8) % 3]), [(8,), (8,)], False),
    # reductions
    "prod_all": (lambda a, b: ri(jnp.prod(cx(a, b))), [(3, 5), (3, 5)], True),
    "prod_axis": (lambda a, b: ri(jnp.prod(cx(a, b), axis=1, keepdims=True)),
                  [(3, 7), (3, 7)], True),
    "prod_axes": (lambda a, b: ri(jnp.prod(cx(a, b), axis=(0, 2))), [(2, 3, 3), (2, 3, 3)],
                  True),
    "max_axis": (lambda a, b: ri(jnp.max(cx(a, b), axis=0)), [(5, 3), (5, 3)], True),
    "min_all": (lambda a, b: ri(jnp.min(cx(a, b))), [(3, 4), (3, 4)], True),
    "max_ties": (lambda a, b: ri(jnp.max(ties(a, b), axis=1)), [(4, 9), (4, 9)], False),
    "mean": (lambda a, b: ri(jnp.mean(cx(a, b), axis=1)), [(3, 4), (3, 4)], True),
    "var": (lambda a, b: jnp.var(cx(a, b), axis=0), [(5, 3), (5, 3)], True),
    "std_ddof": (lambda a, b: jnp.std(cx(a, b), ddof=1), [(6,), (6,)], True),
    "cumsum": (lambda a, b: ri(jnp.cumsum(cx(a, b), axis=1)), [(2, 5), (2, 5)], True),
    "cumprod": (lambda a, b: ri(jnp.cumprod(cx(a, b), axis=0)), [(4, 3), (4, 3)], True),
    "norm": (lambda a, b: jnp.linalg.norm(cx(a, b)), [(7,), (7,)], True),
    "nansum": (lambda a, b: ri(jnp.nansum(with_nans(a, b), axis=1)), [(3, 5), (3, 5)], False),
    "nanmean": (lambda a, b: ri(jnp.nanmean(with_nans(a, b), axis=0)), [(4, 3), (4, 3)], False),
    "nanvar": (lambda a, b: jnp.nanvar(with_nans(a, b), axis=1), [(3, 6), (3, 6)], False),
    "nanstd": (lambda a, b: jnp.nanstd(with_nans(a, b), ddof=1), [(9,), (9,)], False),
    "logsumexp": (lambda a, b: ri(jax.nn.logsumexp(cx(a, b), axis=1)), [(3, 5), (3, 5)], True),
    "cov": (lambda a, b: ri(jnp.cov(cx(a, b))), [(3, 6), (3, 6)], True),
    "corrcoef": (lambda a, b: ri(jnp.corrcoef(cx(a, b))), [(3, 6), (3, 6)], False),
    "vdot": (lambda a, b, c, d: ri(jnp.vdot(cx(a, b), cx(c, d))), [(2, 3), (2, 3), (6,), (6,)],
             True),
    "vecdot": (lambda a, b, c, d: ri(jnp.vecdot(cx(a, b), cx(c, d))),
               [(3, 4), (3, 4), (3, 4), (3, 4)], True),
    "norm_fro": (lambda a, b: jnp.linalg.norm(cx(a, b), "fro"), [(3, 4), (3, 4)], True),
    "norm_inf": (lambda a, b: jnp.linalg.norm(cx(a, b), jnp.inf), [(5,), (5,)], True),
    # sorting and indexing
    "sort": (lambda a, b: ri(jnp.sort(ties(a, b), axis=0)), [(8, 3), (8, 3)], False),
    "sort_grad": (lambda a, b: ri(jnp.sort(cx(a, b))), [(2, 6), (2, 6)], True),
    "argsort": (lambda a, b: jnp.argsort(ties(a, b), axis=-1), [(3, 8), (3, 8)], False),
    "take": (lambda a, b: ri(jnp.take(cx(a, b), jnp.array([3, 0, 3, 1]), axis=1)),
             [(2, 5), (2, 5)], True),
    "take_along_axis": (lambda a, b: ri(jnp.take_along_axis(
        cx(a, b), jnp.array([[2, 0, 1], [1, 1, 0]]), axis=1)), [(2, 3), (2, 3)], True),
    "index": (lambda a, b: ri(cx(a, b)[jnp.array([1, 0, 1]), 2:]), [(2, 4), (2, 4)], True),
    "at_set": (lambda a, b, c, d: ri(cx(a, b).at[jnp.array([4, 1])].set(cx(c, d))),
               [(6,), (6,), (2,), (2,)], True),
    "at_add": (lambda a, b, c, d: ri(cx(a, b).at[jnp.array([2, 2, 0])].add(cx(c, d))),
               [(5,), (5,), (3,), (3,)], True),
    "at_multiply": (lambda a, b, c, d: ri(cx(a, b).at[jnp.array([2, -1, 2, 0, 2])].multiply(
        cx(c, d))), [(5,), (5,), (5,), (5,)], False),
    # JAX differentiates scatter_mul only with unique indices.
    "at_multiply_unique": (lambda a, b, c, d: ri(cx(a, b).at[jnp.array([3, 0])].multiply(
        cx(c, d), unique_indices=True)), [(5,), (5,), (2,), (2,)], True),
    "at_min": (lambda a, b, c, d: ri(cx(a, b).at[jnp.array([1, 3, 1, -2])].min(ties_of(c, d))),
               [(5,), (5,), (4,), (4,)], False),
    "at_max": (lambda a, b, c, d: ri(cx(a, b).at[jnp.array([4, 0, 4, 4])].max(cx(c, d))),
               [(5,), (5,), (4,), (4,)], True),
    # On the cut, with signed zeros: XLA's sqrt gives +1j for sqrt(-1 - 0j) (C99's csqrt and
    # numpy: -1j); its log keeps the zero's sign (log(-1 - 0j) = -pi j, as C99).
    "sqrt_signed_zero": (lambda: ri(jnp.sqrt(cx(CUT_RE, CUT_IM))), [], False),
    "log_signed_zero": (lambda: ri(jnp.log(cx(CUT_RE, CUT_IM))), [], False),
    # Division where |b|^2 overflows or underflows, by zero, and with infinities and NaNs: every
    # numerator of DIV_A over every denominator of DIV_B.
    "divide_scaled": (lambda: ri(cx(*div_parts(DIV_A, len(DIV_B), True)) /
                                 cx(*div_parts(DIV_B, len(DIV_A), False))), [], False),
    "divide": (lambda a, b, c, d: ri(cx(a, b) / cx(c, d)), [(2, 5)] * 4, True),
    # jax.grad with respect to complex arguments (the output is the gradient): of real
    # functions (JAX's convention, df/dx + i df/dy), and holomorphic=True.
    "grad_abs2": (lambda a, b: ri(jax.grad(lambda z: jnp.sum(jnp.abs(z) ** 2))(cx(a, b))),
                  [(2, 3), (2, 3)], False),
    "grad_re_exp_w": (lambda a, b, c, d: ri(jax.grad(
        lambda z: jnp.sum(jnp.real(jnp.exp(z) * cx(c, d))))(cx(a, b))), [(2, 3)] * 4, False),
    "grad_re_matmul": (lambda a, b, c, d: ri(jax.grad(
        lambda x: jnp.sum(jnp.real(x @ cx(c, d))))(cx(a, b))), [(2, 3), (2, 3), (3, 2), (3, 2)],
                       False),
    "grad_irfft": (lambda a, b: ri(jax.grad(
        lambda z: jnp.sum(jnp.fft.irfft(z) * jnp.arange(1.0, 9.0)))(cx(a, b))), [(5,), (5,)],
                   False),
    "grad_fft_abs": (lambda a, b: ri(jax.grad(lambda z: jnp.sum(jnp.abs(jnp.fft.fft(z))))(
        cx(a, b))), [(6,), (6,)], False),
    "grad_holomorphic": (lambda a, b: ri(jax.grad(lambda z: jnp.sum(jnp.sin(z) * z),
                                                  holomorphic=True)(cx(a, b))), [(2, 3), (2, 3)],
                         False),
}


def main():
  base.main_for(CASES, OUT, "jax.numpy's complex cases, for tests/core/lax/complex_math_test.cc.",
                "make_complex_math_vectors")


if __name__ == "__main__":
  main()
