#!/usr/bin/env python3
"""Record ml_dtypes' / JAX's answers for graft's fp8 dtypes (core/dtype/float8.h).

Runs ml_dtypes 0.7.0 and JAX 0.10.2 (CPU, jax_enable_x64 on) and writes
tests/core/testdata/float8_vectors.txt, read by tests/core/float8_test.cc through
jnp_vectors::VectorFile. Lines are "name dtype shape values..." (floats with 9 significant
digits for f32, 17 for f64; nan, -nan (sign bit set), inf as such):

    <t>.to_f32          float32 [256]  the f32 value of bit pattern i of fp8 type t
    <t>.to_i32          int32   [256]  jnp.astype(pattern i, int32)
    sweep.f32           float32 [N]    inputs: midpoints between neighbouring fp8 values (ties),
                                       one f32 ulp either side, subnormals, overflow, inf, NaN
    sweep.<t>           int32   [N]    the bits of sweep.f32 converted to t (ml_dtypes; JAX's
                                       astype gives the same, checked here)
    sweep64.f64 / sweep64.<t>          f64 inputs whose f32 rounding would move them onto a tie:
                                       the conversion rounds once
    promote.<t>         int32   [16]   jnp.promote_types(t, DTYPES[j]) (an index into DTYPES, -1
                                       for a TypePromotionError); j = 13, 14, 15 are a weak int,
                                       float and complex (Python scalars, jnp.result_type)
    dot.<case>.in0/in1  float32        fp8 operands (their exact values), dot.<case>.out JAX's
                                       lax.dot_general (its dtype as recorded), contracting
                                       lhs dim 1 with rhs dim 0
    grad.<case>.*       d sum(dot(x.astype(e4m3fn), y.astype(e4m3fn), preferred f32) * ct) / d x,
                        y for f32 x, y; grad.fp8 the e4m3fn cotangent of an e4m3fn operand

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_float8_vectors.py
"""

import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "float8_vectors.txt")

TYPES = {"e4m3fn": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
DTYPES = [np.bool_, np.uint8, np.uint32, np.int32, np.int64, np.float16, jnp.bfloat16,
          np.float32, np.float64, np.complex64, np.complex128, ml_dtypes.float8_e4m3fn,
          ml_dtypes.float8_e5m2]
WEAK = [1, 1.0, 1j]
lines = []


def fmt(v, dtype):
    if dtype in ("int32", "bool"):
        return str(int(v))
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"  # the sign of a NaN matters to fp8
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v)) if dtype == "float64" else "%.9g" % v


def record(name, arr, dtype=None):
    arr = np.asarray(arr)
    dtype = dtype or str(arr.dtype)
    shape = ",".join(str(d) for d in arr.shape) if arr.ndim else "scalar"
    vals = " ".join(fmt(v, dtype) for v in arr.astype(np.float64).ravel())
    lines.append(f"{name} {dtype} {shape} {vals}")


def patterns(t):
    return np.arange(256, dtype=np.uint8).view(t)


def sweep_f32():
    vals = []
    for t in TYPES.values():
        f = patterns(t).astype(np.float32)
        fin = np.sort(np.unique(f[np.isfinite(f) & (f >= 0)]))
        mids = ((fin[:-1].astype(np.float64) + fin[1:]) / 2).astype(np.float32)  # exact
        vals += list(mids) + list(np.nextafter(mids, np.float32(np.inf)))
        vals += list(np.nextafter(mids, np.float32(0)))
        top = fin[-1]
        vals += [top, top * 1.03, top * 1.0625, top * 1.07, top * 1.2, top * 4, fin[1] / 2,
                 fin[1] / 3, fin[1] * 0.75]
    vals += [0.0, 1e-30, 3e38, 1e-45, np.inf, np.nan]
    v = np.array(vals, np.float32)
    return np.concatenate([v, -v])


def sweep_f64():
    base = [1.0625, 1.1875, 0.0029296875, 240.0, 3.0 * 2 ** -10, 1.125, 1.375, 20480.0]
    v = []
    for b in base:
        v += [b + b * 2 ** -35, b - b * 2 ** -35, b]
    v = np.array(v, np.float64)
    return np.concatenate([v, -v])


def main():
    for name, t in TYPES.items():
        p = patterns(t)
        record(f"{name}.to_f32", p.astype(np.float32))
        record(f"{name}.to_i32", np.asarray(jnp.asarray(p).astype(jnp.int32)))
    for tag, xs in (("sweep", sweep_f32()), ("sweep64", sweep_f64())):
        record(f"{tag}.{'f32' if tag == 'sweep' else 'f64'}", xs)
        for name, t in TYPES.items():
            bits = xs.astype(t).view(np.uint8)
            by_jax = np.asarray(jnp.asarray(xs).astype(t)).view(np.uint8)
            assert (bits == by_jax).all(), (tag, name)
            record(f"{tag}.{name}", bits.astype(np.int32))
    for name, t in TYPES.items():
        row = []
        for other in DTYPES + WEAK:
            try:
                r = (jnp.promote_types(t, other) if not isinstance(other, (int, float, complex))
                     else jnp.result_type(t, other))
                row.append([np.dtype(d) for d in DTYPES].index(np.dtype(r)))
            except jax.errors.JAXTypeError if hasattr(jax.errors, "JAXTypeError") else TypeError:
                row.append(-1)
            except Exception as e:  # TypePromotionError
                assert "promotion" in str(e), e
                row.append(-1)
        record(f"promote.{name}", np.array(row, np.int32))

    rng = np.random.default_rng(8)

    def fp8_values(t, shape, scale):
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        return x.astype(t).astype(np.float32)

    dn = (((1,), (0,)), ((), ()))
    cases = [("e4", "e4m3fn", "e4m3fn", None), ("e4_f32", "e4m3fn", "e4m3fn", jnp.float32),
             ("e4_bf16", "e4m3fn", "e4m3fn", jnp.bfloat16), ("e5", "e5m2", "e5m2", None),
             ("e5_f32", "e5m2", "e5m2", jnp.float32), ("e4e5_f32", "e4m3fn", "e5m2", jnp.float32)]
    for case, lt, rt, pref in cases:
        a = fp8_values(TYPES[lt], (5, 24), 2.0)
        b = fp8_values(TYPES[rt], (24, 3), 2.0)
        out = jax.lax.dot_general(jnp.asarray(a).astype(TYPES[lt]), jnp.asarray(b).astype(TYPES[rt]),
                                  dn, preferred_element_type=pref)
        record(f"dot.{case}.in0", a)
        record(f"dot.{case}.in1", b)
        record(f"dot.{case}.out", np.asarray(out.astype(jnp.float32)), str(out.dtype))
    # jnp.dot of two e4m3fn arrays: its dtype without preferred_element_type.
    e4 = jnp.ones((2, 3), ml_dtypes.float8_e4m3fn)
    assert jnp.dot(e4, e4.T).dtype == ml_dtypes.float8_e4m3fn

    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = rng.standard_normal((6, 3)).astype(np.float32)
    ct = (1 + 0.25 * np.arange(12, dtype=np.float32)).reshape(4, 3)

    def f(x, y):
        e = ml_dtypes.float8_e4m3fn
        return jnp.sum(jnp.dot(x.astype(e), y.astype(e), preferred_element_type=jnp.float32) * ct)

    gx, gy = jax.grad(f, argnums=(0, 1))(x, y)
    record("grad.f32.in0", x)
    record("grad.f32.in1", y)
    record("grad.f32.ct", ct)
    record("grad.f32.grad0", gx)
    record("grad.f32.grad1", gy)
    a = fp8_values(ml_dtypes.float8_e4m3fn, (4, 6), 1.0)

    def g(a, y):
        return jnp.sum(jnp.dot(a, y.astype(a.dtype), preferred_element_type=jnp.float32) * ct)

    ga = jax.grad(g)(jnp.asarray(a).astype(ml_dtypes.float8_e4m3fn), y)
    assert ga.dtype == ml_dtypes.float8_e4m3fn
    record("grad.fp8.in0", a)
    record("grad.fp8.grad0", np.asarray(ga.astype(jnp.float32)), "float8_e4m3fn")

    with open(OUT, "w") as fh:
        fh.write("# fp8 vectors recorded by tools/make_float8_vectors.py (ml_dtypes "
                 f"{ml_dtypes.__version__}, JAX {jax.__version__}, x64 on)\n")
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} vectors to {OUT}")


if __name__ == "__main__":
    main()
