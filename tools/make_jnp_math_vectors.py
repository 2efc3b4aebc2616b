"""Writes tests/core/testdata/jnp_math_vectors.txt: jax.numpy math functions evaluated by JAX.

Run with the peers' venv (JAX / jaxlib 0.10.2, CPU, default flags: x64 off):

    ~/.cache/graft-peers/venv/bin/python tools/make_jnp_math_vectors.py \
        > tests/core/testdata/jnp_math_vectors.txt

For each function it evaluates f at fixed f32 inputs (zeros of both signs, negatives, halves,
large values, +-inf, NaN) and, for the differentiable ones, the gradient of sum(f(...)) with
respect to each float argument (jax.grad). Unary functions take the vector UNARY; binary ones
every pair of BINARY x BINARY (a varies slowest). Output lines (whitespace separated):

    input <name> <n> <v...>             the inputs (unary, binary_a, binary_b)
    value <fn> <dtype> <n> <v...>       f(inputs) (dtype: float32 or bool)
    grad<i> <fn> float32 <n> <v...>     d sum(f) / d argument i
    d2 sinc / d4 sinc                   sinc's 2nd / 4th derivative at UNARY (nested grad)

Floats are written with float.hex (exact; 'inf', '-inf', 'nan'); bools as 0 / 1.
tests/core/numpy/ufuncs_test.cc reads the file and compares graft's values and gradients.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

inf, nan = np.inf, np.nan
UNARY = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25, 1e-3, 27.0,
                  -8.0, 100.0, -100.0, 1e30, -1e30, 3e38, inf, -inf, nan], np.float32)
B = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5, 1e30, inf, -inf, nan]
BINARY_A = np.array([a for a in B for _ in B], np.float32)
BINARY_B = np.array([b for _ in B for b in B], np.float32)

# name -> (function, arity, differentiable)
FUNCS = {
    "log2": (jnp.log2, 1, True),
    "log10": (jnp.log10, 1, True),
    "exp2": (jnp.exp2, 1, True),
    "cbrt": (jnp.cbrt, 1, True),
    "deg2rad": (jnp.deg2rad, 1, True),
    "rad2deg": (jnp.rad2deg, 1, True),
    "sinc": (jnp.sinc, 1, True),
    "signbit": (jnp.signbit, 1, False),
    "trunc": (jnp.trunc, 1, True),
    "rint": (jnp.rint, 1, True),
    "positive": (jnp.positive, 1, True),
    "fabs": (jnp.fabs, 1, True),
    "isposinf": (jnp.isposinf, 1, False),
    "isneginf": (jnp.isneginf, 1, False),
    "nan_to_num": (jnp.nan_to_num, 1, True),
    "nan_to_num_args": (lambda x: jnp.nan_to_num(x, nan=7.0, posinf=9.0, neginf=-9.0), 1, True),
    "logaddexp": (jnp.logaddexp, 2, True),
    "logaddexp2": (jnp.logaddexp2, 2, True),
    "hypot": (jnp.hypot, 2, True),
    "arctan2": (jnp.arctan2, 2, True),
    "copysign": (jnp.copysign, 2, True),
    "fmax": (jnp.fmax, 2, True),
    "fmin": (jnp.fmin, 2, True),
    "heaviside": (jnp.heaviside, 2, True),
    "float_power": (jnp.float_power, 2, True),
    "fmod": (jnp.fmod, 2, True),
    "divmod_q": (lambda a, b: jnp.divmod(a, b)[0], 2, False),
    "divmod_r": (lambda a, b: jnp.divmod(a, b)[1], 2, True),
    "isclose": (jnp.isclose, 2, False),
    "isclose_nan": (lambda a, b: jnp.isclose(a, b, equal_nan=True), 2, False),
    "isclose_tol": (lambda a, b: jnp.isclose(a, b, rtol=0.5, atol=1.0), 2, False),
}


def fmt(arr):
    arr = np.asarray(arr).ravel()
    if arr.dtype == np.bool_:
        return " ".join("1" if v else "0" for v in arr)
    return " ".join(float(v).hex() for v in arr.astype(np.float32))


def main(out):
    assert jax.__version__ == "0.10.2", jax.__version__
    out.write("# made by tools/make_jnp_math_vectors.py with JAX %s on %s\n"
              % (jax.__version__, jax.default_backend()))
    ins = {"unary": UNARY, "binary_a": BINARY_A, "binary_b": BINARY_B}
    for name, v in ins.items():
        out.write("input %s %d %s\n" % (name, v.size, fmt(v)))
    for name, (f, arity, diff) in FUNCS.items():
        args = (jnp.asarray(UNARY),) if arity == 1 else (jnp.asarray(BINARY_A),
                                                          jnp.asarray(BINARY_B))
        y = np.asarray(f(*args))
        dtype = "bool" if y.dtype == np.bool_ else str(y.dtype)
        assert dtype in ("bool", "float32"), (name, dtype)
        out.write("value %s %s %d %s\n" % (name, dtype, y.size, fmt(y)))
        if not diff:
            continue
        grads = jax.grad(lambda *a: jnp.sum(f(*a)), argnums=tuple(range(arity)))(*args)
        for i, g in enumerate(grads):
            out.write("grad%d %s float32 %d %s\n" % (i, name, g.size, fmt(g)))
    # sinc's 2nd and 4th derivatives (JAX's Maclaurin custom_jvp at 0), elementwise.
    d = jnp.sinc
    for order in range(1, 5):
        d = jax.grad(lambda x, d=d: jnp.sum(d(x)))
        if order % 2 == 0:
            y = d(jnp.asarray(UNARY))
            out.write("d%d sinc float32 %d %s\n" % (order, y.size, fmt(y)))


if __name__ == "__main__":
    main(sys.stdout)
