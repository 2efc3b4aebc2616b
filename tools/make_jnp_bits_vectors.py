#!/usr/bin/env python3
"""Record JAX's results for graft's jax.numpy integer / bit functions, special functions and
dtype queries (core/numpy/bits.h, core/numpy/special.h, core/dtype/dtype_info.h).

Runs jax.numpy (JAX 0.10.2 on CPU) on the fixed inputs below and writes
tests/core/testdata/jnp_bits_vectors.txt, read by tests/core/numpy/bits_test.cc. Lines, in
the format of tools/make_jnp_tail_vectors.py:

    <case>.in<k>   <dtype> <shape|scalar> <values...>   the inputs, as given in CASES
    <case>.out<k>  ...                                   JAX's output(s)
    <case>.grad<k> ...                                   d sum(out0 * ct) / d in<k> (jax.grad),
                                                         ct = 1 + 0.25 * arange(out0.size)

CASES run with x64 off (JAX's default); CASES64 (float64 inputs) and the dtype tables run with
jax_enable_x64 on. Tables (no inputs, one output each):
    dtype.result_type   [9, 9] index (into DTYPES) of jnp.result_type(a, b), x64 on
    dtype.result_weak   [7, 3] jnp.result_type(a, w) for w in (int 1, float 1.0, True), x64 off
    dtype.can_cast.<c>  [9, 9] np.can_cast(a, b, casting=c) (jnp.can_cast is numpy's)
    dtype.issubdtype    [9, 9 + len(CATEGORIES)] jnp.issubdtype(a, b) for b a dtype / category
    dtype.isdtype       [9, len(KINDS)] jnp.isdtype(a, kind)
    dtype.finfo.<name>  [len(FINFO_FIELDS)] jnp.finfo(name)'s fields, as float64
    dtype.iinfo.<name>  [3] bits, min, max
XLA's CPU backend flushes subnormal float inputs to zero (so, e.g., frexp(1e-40) is (0.5, -149)
there); graft computes with them as IEEE numbers, so the inputs avoid subnormal values except
where both agree (f16 subnormals, which are normal f32 values; nextafter at the smallest f32 /
f64 subnormal, which it handles through the bits). Floats are written with 17 significant digits (9 for 32-bit and narrower), ints in decimal,
bool as 0 / 1. The C++ test repeats each case's call by name.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_bits_vectors.py
"""

import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from make_jnp_tail_vectors import fmt, record  # noqa: E402  (the same line format)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "jnp_bits_vectors.txt")

nan, inf = np.nan, np.inf
rng = np.random.default_rng(23)
I8A = np.array([12, -18, 0, 0, 7, -35, 1, 2 ** 31 - 1], np.int32)
I8B = np.array([18, 12, 5, 0, -21, -49, 0, 6], np.int32)
U8 = np.array([0, 1, 7, 128, 200, 255], np.uint8)
U32 = np.array([0, 1, 0xFFFFFFFF, 0x80000000, 12345678, 0x0F0F0F0F], np.uint32)
I32 = np.array([0, 1, -1, -2 ** 31, 2 ** 31 - 1, -12345, 255, 1 << 20], np.int32)
SHIFT_X = np.array([-8, 8, -1, 1000, -1000, 7, -7, 2 ** 31 - 1], np.int32)
SHIFT_S = np.array([1, 2, 31, 3, 32, 33, 0, 30], np.int32)
BITS = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1]], np.int32)
F = np.array([0.0, -0.0, 1.0, -3.5, 0.1, 1.5e-38, -1e-45, 3.4e38, inf, -inf, nan, 1e30],
             np.float32)
FY = np.array([1.0, -1.0, 2.0, -inf, 0.0, 0.0, 1.0, inf, 0.0, 0.0, 1.0, nan], np.float32)
FX = np.array([0.7, -2.25, 5.5, 1e-3, -0.5, 12.0, 3.0], np.float32)
EXPS = np.array([3, -4, 0, 130, -100, 1, -2], np.int32)
LD_X = np.array([1.0, 0.75, -3.0, 1e-37, 3e38, 0.0, inf, -2.0], np.float32)
LD_E = np.array([-150, -120, 10, 100, -300, 5, 2, 127], np.int32)
M34 = rng.standard_normal((3, 4)).astype(np.float32)
PHASE = np.array([0.0, 2.5, 5.9, 9.0, 1.0, -4.0, -10.0, 20.0], np.float32)
G5 = np.array([1.0, 2.0, 4.0, 7.0, 11.0], np.float32)
X5 = np.array([0.0, 0.5, 2.0, 2.5, 4.0], np.float32)
I0X = np.array([0.0, 0.3, -1.0, 2.5, 7.9, 8.0, -8.1, 15.0, 40.0, -85.0], np.float32)
HALF = np.array([0.0, 1.0, -1.5, 6e-8, 65504.0, -2.0, inf], np.float16)
HALFY = np.array([1.0, 2.0, -inf, 1.0, inf, 0.0, 0.0], np.float16)
BF = np.array([0.0, 1.0, -1.5, 2e-38, 3e38, -2.0, 0.1], jnp.bfloat16)
BFY = np.array([-1.0, 0.0, 2.0, 1.0, inf, -inf, 0.0], jnp.bfloat16)



def normal(x):
  """x without its subnormal values (XLA's CPU backend flushes those to zero)."""
  return x[~((np.abs(x) < np.finfo(x.dtype).tiny) & (x != 0))]


# name -> (function, inputs, record gradients)
CASES = {
    # integers and bits
    "gcd": (jnp.gcd, [I8A, I8B], False),
    "gcd_bcast": (lambda a: jnp.gcd(a, np.int32(6)), [I8A], False),
    "gcd_u8": (jnp.gcd, [np.array([12, 0, 255, 9], np.uint8),
                         np.array([18, 5, 15, 0], np.uint8)], False),
    "lcm": (jnp.lcm, [I8A[:6], I8B[:6]], False),
    "lcm_u32": (jnp.lcm, [np.array([4, 6, 0, 7], np.uint32),
                          np.array([6, 4, 3, 13], np.uint32)], False),
    "bitwise_count_i32": (jnp.bitwise_count, [I32], False),
    "bitwise_count_u32": (jnp.bitwise_count, [U32], False),
    "bitwise_count_u8": (jnp.bitwise_count, [U8], False),
    "bitwise_count_bool": (jnp.bitwise_count, [np.array([True, False])], False),
    "right_shift": (jnp.right_shift, [SHIFT_X, SHIFT_S], False),
    "right_shift_u8": (jnp.right_shift, [np.array([200, 200, 255, 1, 128, 77], np.uint8),
                                         np.array([1, 7, 8, 9, 3, 0], np.uint8)], False),
    "right_shift_u32": (jnp.right_shift, [U32, np.array([1, 0, 31, 32, 4, 40], np.uint32)],
                        False),
    "right_shift_scalar": (lambda a: jnp.right_shift(a, 2), [SHIFT_X], False),
    "bitwise_right_shift": (jnp.bitwise_right_shift, [SHIFT_X, SHIFT_S[::-1].copy()], False),
    "packbits": (jnp.packbits, [BITS], False),
    "packbits_axis1": (lambda a: jnp.packbits(a, axis=1), [BITS], False),
    "packbits_little": (lambda a: jnp.packbits(a, axis=0, bitorder="little"), [BITS.T.copy()],
                        False),
    "packbits_bool": (lambda a: jnp.packbits(a, axis=-1), [BITS.astype(bool)], False),
    "unpackbits": (jnp.unpackbits, [np.array([[1, 200], [255, 0]], np.uint8)], False),
    "unpackbits_axis": (lambda a: jnp.unpackbits(a, axis=0, count=11, bitorder="little"),
                        [np.array([[1, 200], [255, 3]], np.uint8)], False),
    "unpackbits_count": (lambda a: jnp.unpackbits(a, axis=1, count=5),
                         [np.array([[1, 200], [255, 3]], np.uint8)], False),
    # floats: frexp / ldexp / modf / nextafter
    "frexp": (jnp.frexp, [normal(F)], False),
    "frexp_grad": (jnp.frexp, [FX], True),
    "frexp_f16": (jnp.frexp, [HALF], False),
    "frexp_bf16": (jnp.frexp, [BF], False),
    "frexp_int": (jnp.frexp, [np.array([0, 3, -8, 100], np.int32)], False),
    "ldexp": (jnp.ldexp, [LD_X, LD_E], True),
    "ldexp_grad": (jnp.ldexp, [FX, EXPS], True),
    "ldexp_f16": (jnp.ldexp, [HALF, np.array([1, -30, 2, 10, 1, -3, 0], np.int32)], False),
    "ldexp_int": (jnp.ldexp, [np.array([1, -3, 5], np.int32), np.array([2, 3, -1], np.int32)],
                  False),
    "modf": (jnp.modf, [np.array([2.75, -2.75, 0.0, -0.0, 5.0, inf, -inf, nan, 1e-3], np.float32)],
             False),
    "modf_grad": (jnp.modf, [FX], True),
    "modf_int": (jnp.modf, [np.array([3, -2], np.int32)], False),
    "nextafter": (jnp.nextafter, [F, FY], False),
    "nextafter_f16": (jnp.nextafter, [HALF, HALFY], False),
    "nextafter_bf16": (jnp.nextafter, [BF, BFY], False),
    # special functions
    "i0": (jnp.i0, [I0X], True),
    "i0_int": (jnp.i0, [np.array([0, 1, -3], np.int32)], False),
    "kaiser": (lambda: jnp.kaiser(7, 4.0), [], False),
    "kaiser_even": (lambda: jnp.kaiser(6, 8.6), [], False),
    "kaiser_one": (lambda: jnp.kaiser(1, 3.0), [], False),
    "unwrap": (jnp.unwrap, [PHASE], True),
    "unwrap_2d": (lambda p: jnp.unwrap(p * 3.0, axis=0), [M34], True),
    "unwrap_period": (lambda p: jnp.unwrap(p, discont=2.0, period=6.0), [PHASE], True),
    "unwrap_int": (lambda p: jnp.unwrap(p, period=10), [np.array([0, 4, 11, 2, 30, -7],
                                                                    np.int32)], False),
    "gradient": (jnp.gradient, [G5], True),
    "gradient_dx": (lambda f: jnp.gradient(f, 0.5), [G5], True),
    "gradient_x": (lambda f, x: jnp.gradient(f, x), [G5, X5], True),
    "gradient_2d": (lambda f: jnp.gradient(f), [M34], True),
    "gradient_2d_spacing": (lambda f: jnp.gradient(f, 2.0, jnp.array([0.0, 1.0, 1.5, 3.0]),
                                                   axis=(0, 1)), [M34], True),
    "gradient_axis": (lambda f: jnp.gradient(f, axis=-1), [M34], True),
    "gradient_int": (jnp.gradient, [np.array([1, 4, 9, 16], np.int32)], False),
}

F64X = np.array([0.0, 1.0, -3.5, 3e-308, 5e-324, 1.7e308, inf, nan, 0.1], np.float64)
F64Y = np.array([1.0, 2.0, -inf, 0.0, -1.0, inf, 0.0, 1.0, 0.0], np.float64)
CASES64 = {
    "frexp_f64": (jnp.frexp, [normal(F64X)], False),
    "ldexp_f64": (jnp.ldexp, [np.array([1.0, 1.5, -3.0, 1e-300], np.float64),
                              np.array([-1022, 1023, 10, -20], np.int32)], False),
    "nextafter_f64": (jnp.nextafter, [F64X, F64Y], False),
    "i0_f64": (jnp.i0, [np.array([0.0, 0.5, 3.0, 9.5, 100.0, -700.0], np.float64)], True),
    "gcd_i64": (jnp.gcd, [np.array([2 ** 40, -6, 0], np.int64), np.array([2 ** 35 * 3, 4, 0],
                                                                        np.int64)], False),
    "bitwise_count_i64": (jnp.bitwise_count, [np.array([-1, 2 ** 40 + 7, 0, -2 ** 63],
                                                       np.int64)], False),
    "right_shift_i64": (jnp.right_shift, [np.array([-2 ** 40, 2 ** 40, -5, -5], np.int64),
                                          np.array([8, 40, 63, 64], np.int64)], False),
}

# graft's dtypes, in core/dtype/dtype.h's order.
DTYPES = [np.bool_, np.uint8, np.uint32, np.int32, np.int64, np.float16, jnp.bfloat16,
          np.float32, np.float64]
CATEGORIES = [jnp.generic, jnp.number, jnp.integer, jnp.signedinteger, jnp.unsignedinteger,
              jnp.inexact, jnp.floating, jnp.complexfloating, jnp.bool_]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
FINFO_FIELDS = ["bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
                "smallest_subnormal", "resolution", "nmant", "nexp", "maxexp", "minexp",
                "machep", "negep", "iexp", "precision"]


def index(dt):
  return [np.dtype(d) for d in DTYPES].index(np.dtype(dt))


def dtype_tables(lines, x64):
  n = len(DTYPES)
  if not x64:
    weak = [[index(jnp.result_type(a, w)) for w in (1, 1.0, True)] for a in DTYPES[:7]
            if a not in (np.int64,)]
    lines.append(fmt("dtype.result_weak.out0", np.array(weak, np.int32)))
    lines.append(fmt("dtype.result_only_weak.out0",
                     np.array([index(jnp.result_type(*w)) for w in
                               [(1,), (1.0,), (True,), (1, 1.0), (True, 1)]], np.int32)))
    return
  lines.append(fmt("dtype.result_type.out0",
                   np.array([[index(jnp.result_type(a, b)) for b in DTYPES] for a in DTYPES],
                            np.int32)))
  for c in CASTINGS:
    lines.append(fmt("dtype.can_cast.%s.out0" % c,
                     np.array([[jnp.can_cast(a, b, casting=c) for b in DTYPES] for a in DTYPES])))
  lines.append(fmt("dtype.issubdtype.out0",
                   np.array([[jnp.issubdtype(a, b) for b in DTYPES + CATEGORIES]
                             for a in DTYPES])))
  lines.append(fmt("dtype.isdtype.out0",
                   np.array([[jnp.isdtype(a, k) for k in KINDS] for a in DTYPES])))
  for d in DTYPES[5:]:
    fi = jnp.finfo(d)
    lines.append(fmt("dtype.finfo.%s.out0" % np.dtype(d).name,
                     np.array([float(getattr(fi, f)) for f in FINFO_FIELDS], np.float64)))
  for d in DTYPES[1:5]:
    ii = jnp.iinfo(d)
    lines.append(fmt("dtype.iinfo.%s.out0" % np.dtype(d).name,
                     np.array([ii.bits, ii.min, ii.max], np.float64)))
  del n


COMPLEX = [np.complex64, np.complex128]


def complex_tables(lines):
  """The dtype queries with complex64 / complex128 (x64 on): ALL = DTYPES + COMPLEX, indices
  into ALL.
    dtype.complex.result_type  [2, 11] jnp.result_type(c, b)
    dtype.complex.result_weak  [4] jnp.result_type of (1j,), (f32, 1j), (bf16, 1j), (i32, 1j),
                               with x64 off (complex_weak, as graft's weak scalars)
    dtype.complex.result_weak64 [1] jnp.result_type(f64, 1j)
    dtype.complex.can_cast.<c> [2, 11] from c to b, then [11, 2] from b to c
    dtype.complex.issubdtype   [2, 11 + len(CATEGORIES)]
    dtype.complex.isdtype      [2, len(KINDS)]
    dtype.finfo.complex64 / complex128, as the real ones"""
  every = DTYPES + COMPLEX

  def at(dt):
    return [np.dtype(d) for d in every].index(np.dtype(dt))

  lines.append(fmt("dtype.complex.result_type.out0",
                   np.array([[at(jnp.result_type(c, b)) for b in every] for c in COMPLEX],
                            np.int32)))
  lines.append(fmt("dtype.complex.result_weak64.out0",
                   np.array([at(jnp.result_type(np.float64, 1j))], np.int32)))
  for c in CASTINGS:
    table = [[jnp.can_cast(a, b, casting=c) for b in every] for a in COMPLEX]
    table += [[jnp.can_cast(b, a, casting=c) for a in COMPLEX] for b in every]
    lines.append(fmt("dtype.complex.can_cast.%s.out0" % c,
                     np.array(sum(table, []))))
  lines.append(fmt("dtype.complex.issubdtype.out0",
                   np.array([[jnp.issubdtype(a, b) for b in every + CATEGORIES] for a in COMPLEX])))
  lines.append(fmt("dtype.complex.isdtype.out0",
                   np.array([[jnp.isdtype(a, k) for k in KINDS] for a in COMPLEX])))
  for d in COMPLEX:
    fi = jnp.finfo(d)
    lines.append(fmt("dtype.finfo.%s.out0" % np.dtype(d).name,
                     np.array([float(getattr(fi, f)) for f in FINFO_FIELDS], np.float64)))


def complex_weak(lines):
  """dtype.complex.result_weak (see complex_tables), recorded with x64 off."""
  every = DTYPES + COMPLEX
  weak = [(1j,), (np.float32, 1j), (jnp.bfloat16, 1j), (np.int32, 1j)]
  lines.append(fmt("dtype.complex.result_weak.out0",
                   np.array([[np.dtype(d) for d in every].index(np.dtype(jnp.result_type(*w)))
                             for w in weak], np.int32)))


def main():
  assert jax.__version__ == "0.10.2", jax.__version__
  lines = ["# made by tools/make_jnp_bits_vectors.py with JAX %s on %s"
           % (jax.__version__, jax.default_backend())]
  record(CASES, lines)
  dtype_tables(lines, x64=False)
  complex_weak(lines)
  jax.config.update("jax_enable_x64", True)
  record(CASES64, lines)
  dtype_tables(lines, x64=True)
  complex_tables(lines)
  with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
  main()
