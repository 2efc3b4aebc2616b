#!/usr/bin/env python3
"""Print the JAX reference values of tests/core/primitives/specs/jax_parity_cases.cc.

Runs jax.numpy on CPU (JAX 0.10.2, default config: jax_enable_x64=False; the i64 and f64
rows with JAX_ENABLE_X64=1, since graft has i64 and f64 as first-class types) and prints
C++ initializer lists to paste into the spec file. Floats print as Python reprs (every
value of the grids is exact in f16, bf16, f32 and f64; -0.0 stays -0.0), so the C++
literals are the values JAX returned.

Usage:
    python3 tools/make_jax_edge_vectors.py                      # x64 off: f32/bf16/f16, i32/u32/u8
    JAX_ENABLE_X64=1 python3 tools/make_jax_edge_vectors.py     # also f64 and i64
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

X64 = bool(os.environ.get("JAX_ENABLE_X64"))
INF = float("inf")
# Every pair of these: signed zeros, infinities, NaN, exact and inexact quotients.
GRID = [-INF, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, INF, float("nan"), 7.5, -7.5]
# Quotients whose rounding matters (x - fmod(x, y) is inexact in f32).
ROUGH_X = [7.3, -7.3, 1e7 + 0.5, 5.0, -5.0, 0.3, 1.0, -2.0, 3e-7, 123456.7]
ROUGH_Y = [0.1, 0.1, 0.7, 0.1, -0.1, 0.1, 0.3, 0.6, -1e-7, -0.37]


def lit(v):
    v = float(v)
    if np.isnan(v):
        return "kNan"
    if np.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(v)


def cxx(name, vals):
    print(f"// {name}\n{{" + ", ".join(lit(v) for v in vals) + "}")


def float_grid(dtype):
    a = jnp.array([x for x in GRID for _ in GRID], dtype)
    b = jnp.array([y for _ in GRID for y in GRID], dtype)
    return jnp.floor_divide(a, b), jnp.remainder(a, b)


def main():
    print(f"// jax {jax.__version__}, x64={X64}")
    dtypes = [jnp.float32, jnp.bfloat16, jnp.float16] + ([jnp.float64] if X64 else [])
    fd0, rm0 = float_grid(jnp.float32)
    for d in dtypes:  # the grid gives the same values (and zero signs) in every float dtype
        fd, rm = float_grid(d)
        same = lambda p, q: np.array_equal(np.asarray(p, np.float64), np.asarray(q, np.float64),
                                           equal_nan=True) and np.array_equal(
                                               np.signbit(np.asarray(p, np.float64)),
                                               np.signbit(np.asarray(q, np.float64)))
        print(f"// {jnp.dtype(d).name}: grid equal to f32's: {same(fd, fd0) and same(rm, rm0)}")
    cxx("floor_divide grid", np.asarray(fd0))
    cxx("remainder grid", np.asarray(rm0))
    x = jnp.array(ROUGH_X, jnp.float32)
    y = jnp.array(ROUGH_Y, jnp.float32)
    cxx("f32 rough x (as stored)", np.asarray(x))
    cxx("f32 rough y (as stored)", np.asarray(y))
    cxx("f32 rough floor_divide", np.asarray(jnp.floor_divide(x, y)))
    cxx("f32 rough remainder", np.asarray(jnp.remainder(x, y)))
    int_dtypes = [jnp.int64] if X64 else [jnp.int32, jnp.uint32, jnp.uint8]
    for d in int_dtypes:
        info = jnp.iinfo(d)
        xs = [0, 1, 7, int(info.max)] + ([-1, -7, int(info.min)] if info.min < 0 else [])
        ys = [0, 1, 3] + ([-1, -3] if info.min < 0 else [])
        a = jnp.array([x for x in xs for _ in ys], d)
        b = jnp.array([y for _ in xs for y in ys], d)
        name = jnp.dtype(d).name
        print(f"// {name} x {xs} times y {ys}")
        print("// floor_divide {" + ", ".join(str(int(v)) for v in jnp.floor_divide(a, b)) + "}")
        print("// remainder {" + ", ".join(str(int(v)) for v in jnp.remainder(a, b)) + "}")
    # Dtype rules (x64 off): promotion with weak C++ scalars, clip, cumsum, sum.
    if not X64:
        for d in [jnp.bool_, jnp.uint8, jnp.uint32, jnp.int32, jnp.float16, jnp.bfloat16]:
            a = jnp.ones((3,), d)
            print(f"// {jnp.dtype(d).name}: +2.5 {(a + 2.5).dtype} weak={(a + 2.5).weak_type}, "
                  f"+2 {(a + 2).dtype}, clip(0.5, 2.5) {jnp.clip(a, 0.5, 2.5).dtype}, "
                  f"cumsum {jnp.cumsum(a).dtype}, sum {jnp.sum(a).dtype}")
        c = jnp.clip(jnp.array([-3, 0, 1, 2, 5], jnp.int32), 0.5, 2.5)
        print(f"// clip(i32 [-3, 0, 1, 2, 5], 0.5, 2.5) = {c.tolist()} {c.dtype}")
        u = jnp.cumsum(jnp.array([200, 100, 50, 6, 255], jnp.uint8))
        print(f"// cumsum(u8 [200, 100, 50, 6, 255]) = {u.tolist()} {u.dtype}")
        s = jnp.sum(jnp.array([200, 100, 50, 6, 255], jnp.uint8))
        print(f"// sum(u8 [200, 100, 50, 6, 255]) = {int(s)} {s.dtype}")
        print(f"// u32 + i32 = {(jnp.ones(1, jnp.uint32) + jnp.ones(1, jnp.int32)).dtype}")
        print(f"// grad(abs) at [0, -0, nan, 2, -2]: "
              f"{[float(jax.grad(jnp.abs)(v)) for v in [0.0, -0.0, float('nan'), 2.0, -2.0]]}")


if __name__ == "__main__":
    main()
