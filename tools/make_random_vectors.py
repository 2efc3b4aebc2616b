#!/usr/bin/env python3
"""Generate golden test vectors for graft's jax.random-compatible PRNG.

Runs JAX on CPU with its default configuration (in JAX 0.10.2 that means
jax_threefry_partitionable=True, jax_enable_x64=False, default PRNG
threefry2x32) and writes tests/core/random/testdata/random_vectors.txt.

File format (line based, no JSON needed):

    # comment lines (header: how the file was made)
    <case_name> <dtype> <shape> <values...>

  * <dtype>  one of: uint32 uint8 uint16 uint64 int32 bool float16 bfloat16
             float32 float64
  * <shape>  dims joined by ',' (e.g. 2,3,4) or the word 'scalar'
  * values   row-major, space separated. Integers in decimal, bool as 0/1,
             floats as exact bit patterns in hex: float16/bfloat16 0xHHHH,
             float32 0xHHHHHHHH, float64 0xHHHHHHHHHHHHHHHH.

Legacy raw keys (jax.random.PRNGKey(seed) -> uint32[2]) are used everywhere.
Cases named *_logits / *_input are inputs that the matching case consumed.

Usage:
    python3 tools/make_random_vectors.py            # write the file
    python3 tools/make_random_vectors.py --verify   # also re-derive every case
                                                    # with the pure-numpy
                                                    # reference below (see
                                                    # tools/jax_random_algorithms.md)
    python3 tools/make_random_vectors.py --stats    # accuracy study used in the md
"""

import argparse
import datetime
import math
import os
import platform
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402
import ml_dtypes  # noqa: E402  (ships with jax)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "random", "testdata", "random_vectors.txt")

BF16 = np.dtype(ml_dtypes.bfloat16)

# --------------------------------------------------------------------------
# formatting


def dtype_name(dt):
  dt = np.dtype(dt)
  if dt == BF16:
    return "bfloat16"
  return dt.name


def fmt_values(arr):
  arr = np.asarray(arr)
  dt = arr.dtype
  flat = arr.reshape(-1)
  if dt == np.bool_:
    return [str(int(v)) for v in flat]
  if dt == np.float32:
    return ["0x%08x" % v for v in flat.view(np.uint32)]
  if dt == np.float16 or dt == BF16:
    return ["0x%04x" % v for v in flat.view(np.uint16)]
  if dt == np.float64:
    return ["0x%016x" % v for v in flat.view(np.uint64)]
  if np.issubdtype(dt, np.integer):
    return [str(int(v)) for v in flat]
  raise TypeError(dt)


def fmt_line(name, arr):
  arr = np.asarray(arr)
  shape = "scalar" if arr.ndim == 0 else ",".join(str(d) for d in arr.shape)
  return " ".join([name, dtype_name(arr.dtype), shape] + fmt_values(arr))


# --------------------------------------------------------------------------
# the cases (JAX side)

K = lambda s: jr.PRNGKey(s)  # legacy uint32[2] key


def jax_cases():
  """Returns list of (name, numpy array)."""
  c = []
  add = lambda name, v: c.append((name, np.asarray(v)))

  # ---- keys / seeding (x64 disabled: JAX default)
  add("key_seed0", K(0))
  add("key_seed42", K(42))
  add("key_seed2147483647", K(2**31 - 1))
  add("key_seed_neg1", K(-1))
  add("key_seed_2p40_plus5", K(2**40 + 5))
  add("key_seed_2p32", K(2**32))
  # same seeds with x64 enabled (different! see md)
  with jax.enable_x64(True):
    add("key_x64_seed_neg1", K(-1))
    add("key_x64_seed_2p40_plus5", K(2**40 + 5))

  # ---- split / fold_in
  add("split_key0", jr.split(K(0)))
  add("split_key42_num5", jr.split(K(42), 5))
  add("split_key7_shape2x3", jr.split(K(7), (2, 3)))
  add("fold_in_key0_7", jr.fold_in(K(0), 7))
  add("fold_in_key42_2147483647", jr.fold_in(K(42), 2**31 - 1))
  add("fold_in_key42_4294967295", jr.fold_in(K(42), 2**32 - 1))

  # ---- raw bits
  add("bits_key0_u32_10", jr.bits(K(0), (10,), jnp.uint32))
  add("bits_key1_u32_3x4", jr.bits(K(1), (3, 4), jnp.uint32))
  add("bits_key1_u32_scalar", jr.bits(K(1), (), jnp.uint32))
  add("bits_key2_u8_7", jr.bits(K(2), (7,), jnp.uint8))
  add("bits_key2_u16_7", jr.bits(K(2), (7,), jnp.uint16))
  with jax.enable_x64(True):
    add("bits_key2_u64_5", jr.bits(K(2), (5,), jnp.uint64))

  # ---- uniform
  add("uniform_key1_f32_scalar", jr.uniform(K(1), (), jnp.float32))
  add("uniform_key2_f32_7", jr.uniform(K(2), (7,), jnp.float32))
  add("uniform_key3_f32_2x3x4", jr.uniform(K(3), (2, 3, 4), jnp.float32))
  add("uniform_key4_f16_5", jr.uniform(K(4), (5,), jnp.float16))
  add("uniform_key5_bf16_5", jr.uniform(K(5), (5,), jnp.bfloat16))
  with jax.enable_x64(True):
    add("uniform_key6_f64_5", jr.uniform(K(6), (5,), jnp.float64))
  add("uniform_key7_f32_min-2_max3_6",
      jr.uniform(K(7), (6,), jnp.float32, minval=-2., maxval=3.))
  sub = jr.split(K(0))[1]
  add("uniform_splitkey0_1_f32_7", jr.uniform(sub, (7,), jnp.float32))
  add("uniform_foldin42_3_f32_7",
      jr.uniform(jr.fold_in(K(42), 3), (7,), jnp.float32))

  # ---- normal
  add("normal_key8_f32_8", jr.normal(K(8), (8,), jnp.float32))
  add("normal_key9_f32_2x3", jr.normal(K(9), (2, 3), jnp.float32))
  add("normal_key10_f16_4", jr.normal(K(10), (4,), jnp.float16))
  add("normal_key11_bf16_4", jr.normal(K(11), (4,), jnp.bfloat16))
  add("normal_key99_f32_256", jr.normal(K(99), (256,), jnp.float32))

  # ---- truncated normal
  add("truncated_normal_key12_f32_min-2_max1.5_8",
      jr.truncated_normal(K(12), -2., 1.5, (8,), jnp.float32))

  # ---- bernoulli
  add("bernoulli_key13_p0.3_16", jr.bernoulli(K(13), 0.3, (16,)))

  # ---- array parameters, broadcast into the shape (or giving it)
  add("uniform_key20_f32_array_bounds_2x3",
      jr.uniform(K(20), (2, 3), jnp.float32, minval=jnp.array([-1., 0., 2.], jnp.float32),
                 maxval=jnp.array([[1.], [5.]], jnp.float32)))
  add("bernoulli_key21_p_array_2x4",
      jr.bernoulli(K(21), jnp.array([0.1, 0.5, 0.9, 0.3], jnp.float32), (2, 4)))
  add("bernoulli_key22_p_array_no_shape",
      jr.bernoulli(K(22), jnp.array([[0.2, 0.7, 0.5], [0.95, 0.05, 0.6]], jnp.float32)))

  # ---- randint
  add("randint_key14_0_10_10", jr.randint(K(14), (10,), 0, 10, jnp.int32))
  add("randint_key15_-5_1000_6", jr.randint(K(15), (6,), -5, 1000, jnp.int32))
  add("randint_key16_3_4_5", jr.randint(K(16), (5,), 3, 4, jnp.int32))
  add("randint_key17_big_span_6",
      jr.randint(K(17), (6,), -2**31, 2**31 - 1, jnp.int32))

  # ---- categorical
  lg1 = np.array([0.1, -1.0, 2.0, 0.5], np.float32)
  add("categorical_key18_4_shape12_logits", lg1)
  add("categorical_key18_4_shape12", jr.categorical(K(18), lg1, shape=(12,)))
  lg2 = np.array([[0.0, 1.0, 2.0, 3.0, 4.0],
                  [1.5, -0.5, 0.25, 3.0, -2.0],
                  [-1.0, -1.0, -1.0, -1.0, -1.0]], np.float32)
  add("categorical_key19_3x5_axis-1_logits", lg2)
  add("categorical_key19_3x5_axis-1", jr.categorical(K(19), lg2, axis=-1))

  # ---- permutation
  add("permutation_key20_10", jr.permutation(K(20), 10))
  add("permutation_key21_100", jr.permutation(K(21), 100))
  xin = np.arange(6, dtype=np.int32) * 10
  add("permutation_key22_arange6x10_input", xin)
  add("permutation_key22_arange6x10", jr.permutation(K(22), xin))
  return c


# --------------------------------------------------------------------------
# pure numpy reference (mirrors tools/jax_random_algorithms.md)

U32 = np.uint32
F32 = np.float32
F64 = np.float64


def rotl32(x, r):
  return ((x << U32(r)) | (x >> U32(32 - r))).astype(U32)


def threefry2x32(k0, k1, x0, x1):
  k0, k1 = U32(k0), U32(k1)
  x0 = np.asarray(x0, U32).copy()
  x1 = np.asarray(x1, U32).copy()
  rots = ([13, 15, 26, 6], [17, 29, 16, 24])
  ks = [k0, k1, U32(k0 ^ k1 ^ U32(0x1BD11BDA))]
  with np.errstate(over="ignore"):
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
      for r in rots[i % 2]:
        x0 = x0 + x1
        x1 = rotl32(x1, r)
        x1 = x1 ^ x0
      x0 = x0 + ks[(i + 1) % 3]
      x1 = x1 + ks[(i + 2) % 3] + U32(i + 1)
  return x0, x1


def ref_seed(seed, x64=False):
  if x64:
    s = int(seed) & 0xFFFFFFFFFFFFFFFF   # int64 two's complement
    return np.array([s >> 32, s & 0xFFFFFFFF], U32)
  # x32: Python int -> int64 -> canonicalised (wrapped) to int32; the logical
  # right shift by 32 of a 32-bit value is 0.
  return np.array([0, int(seed) & 0xFFFFFFFF], U32)


def iota_hi_lo(n):
  i = np.arange(n, dtype=np.uint64)
  return (i >> np.uint64(32)).astype(U32), (i & np.uint64(0xFFFFFFFF)).astype(U32)


def ref_split(key, shape):
  n = int(np.prod(shape, dtype=np.int64))
  hi, lo = iota_hi_lo(n)
  b1, b2 = threefry2x32(key[0], key[1], hi, lo)
  return np.stack([b1, b2], -1).reshape(tuple(shape) + (2,))


def ref_fold_in(key, data):
  d = int(data) & 0xFFFFFFFF
  b1, b2 = threefry2x32(key[0], key[1], [0], [d])
  return np.array([b1[0], b2[0]], U32)


def ref_bits(key, width, shape):
  n = int(np.prod(shape, dtype=np.int64))
  hi, lo = iota_hi_lo(n)
  b1, b2 = threefry2x32(key[0], key[1], hi, lo)
  if width == 64:
    out = (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
  else:
    out = (b1 ^ b2).astype({8: np.uint8, 16: np.uint16, 32: U32}[width])
  return out.reshape(shape)


def fma32(a, b, c):
  """fmaf emulation: a*b is exact in f64; one f64 rounding then one f32
  rounding (double rounding can in theory differ from a true fmaf in ~2^-29
  of cases; a C++ port should call std::fma(float,float,float))."""
  return (np.asarray(a, F32).astype(F64) * np.asarray(b, F32).astype(F64)
          + np.asarray(c, F32).astype(F64)).astype(F32)


def fma64(a, b, c):
  """Exact fma for float64 via rationals (slow; small arrays only)."""
  from fractions import Fraction
  a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64),
                                np.asarray(c, F64))
  out = [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
         for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]
  return np.array(out, F64).reshape(a.shape)


def ref_uniform(key, shape, dtype, minval=0., maxval=1.):
  """f32/f64: XLA:CPU contracts f*(hi-lo)+lo into an FMA (verified).
  f16/bf16: each op is computed in f32 and rounded to the narrow type (no FMA)."""
  dtype = np.dtype(dtype)
  if dtype == np.float32:
    bits = ref_bits(key, 32, shape)
    f = ((bits >> U32(9)) | U32(0x3F800000)).view(F32) - F32(1)
    lo, hi = F32(minval), F32(maxval)
    return np.maximum(lo, fma32(f, F32(hi - lo), lo)).astype(F32)
  if dtype == np.float64:
    bits = ref_bits(key, 64, shape)
    f = ((bits >> np.uint64(12)) | np.uint64(0x3FF0000000000000)).view(F64) - 1.0
    lo, hi = F64(minval), F64(maxval)
    return np.maximum(lo, fma64(f, F64(hi - lo), lo))
  if dtype == np.float16:
    bits = ref_bits(key, 16, shape)
    f = ((bits >> np.uint16(6)) | np.uint16(0x3C00)).view(np.float16) - np.float16(1)
    lo, hi = np.float16(minval), np.float16(maxval)
    return np.maximum(lo, (f * (hi - lo)) + lo).astype(np.float16)
  if dtype == BF16:
    bits = ref_bits(key, 8, shape).astype(np.uint16)   # NB: 8 random bits
    f = ((bits >> np.uint16(1)) | np.uint16(0x3F80)).view(BF16)
    f = (f.astype(F32) - F32(1)).astype(BF16)
    lo, hi = F32(BF16.type(minval)), F32(BF16.type(maxval))
    span = F32(BF16.type(hi - lo))
    t = (f.astype(F32) * span).astype(BF16)
    t = (t.astype(F32) + lo).astype(BF16)
    return np.maximum(BF16.type(lo), t)
  raise TypeError(dtype)


# XLA CPU f32 log (Cephes/Eigen polynomial, see md). Verified bit-exact vs
# jnp.log on CPU for positive normal inputs.
_LOGP = [7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
         1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
         3.3333331174E-1]


def xla_log_f32(x):
  x = np.asarray(x, F32)
  with np.errstate(all="ignore"):
    t = np.maximum(x, U32(0x00800000).view(F32))
    emm = (t.view(U32) >> U32(23)).astype(np.int32) - 0x7F
    t = ((t.view(U32) & U32(0x807FFFFF)) | U32(0x3F000000)).view(F32)  # [0.5,1)
    e = (F32(1) + emm.astype(F32)).astype(F32)
    m = t < F32(0.707106781186547524)
    t1 = np.where(m, t, F32(0))
    t = (t - F32(1)).astype(F32)
    e = (e - np.where(m, F32(1), F32(0))).astype(F32)
    t = (t + t1).astype(F32)
    x2 = (t * t).astype(F32)
    x3 = (x2 * t).astype(F32)
    P = [F32(p) for p in _LOGP]
    y = fma32(t, P[0], P[1]); y1 = fma32(t, P[3], P[4]); y2 = fma32(t, P[6], P[7])
    y = fma32(y, t, P[2]); y1 = fma32(y1, t, P[5]); y2 = fma32(y2, t, P[8])
    y = fma32(y, x3, y1); y = fma32(y, x3, y2)
    y = fma32(y, x3, (F32(-2.12194440e-4) * e).astype(F32))
    t = (t - (F32(0.5) * x2).astype(F32)).astype(F32)
    t = (t + y).astype(F32)
    t = (t + (F32(0.693359375) * e).astype(F32)).astype(F32)
    t = np.where(x == 0, F32(-np.inf), t)
    t = np.where(x == np.inf, F32(np.inf), t)
    t = np.where((x < 0) | np.isnan(x), F32(np.nan), t)
  return t


_L1P_NUM = [4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
            6.5787325942061044846969E0, 2.9911919328553073277375E1,
            6.0949667980987787057556E1, 5.7112963590585538103336E1,
            2.0039553499201281259648E1]
_L1P_DEN = [1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
            2.2176239823732856465394E2, 3.0909872225312059774938E2,
            2.1642788614495947685003E2, 6.0118660497603843919306E1]


def xla_log1p_f32(x):
  x = np.asarray(x, F32)
  with np.errstate(all="ignore"):
    large = xla_log_f32((x + F32(1)).astype(F32))
    x2 = (x * x).astype(F32)
    num = np.zeros_like(x); den = np.zeros_like(x)
    for c in _L1P_NUM:
      num = fma32(num, x, F32(c))
    for c in _L1P_DEN:
      den = fma32(den, x, F32(c))
    s = (num / den).astype(F32)
    s = ((x * x2).astype(F32) * s).astype(F32)
    s = fma32(F32(-0.5), x2, s)
    s = (x + s).astype(F32)
  return np.where(np.abs(x) < F32(0.41421356237309504880), s, large)


_EI_C1 = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
          0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
_EI_C2 = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
          0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]


def xla_erf_inv_f32(x):
  x = np.asarray(x, F32)
  with np.errstate(all="ignore"):
    w = -xla_log1p_f32((x * -x).astype(F32))
    small = w < F32(5)
    t = np.where(small, (w - F32(2.5)).astype(F32),
                 (np.sqrt(w).astype(F32) - F32(3)).astype(F32))
    p = np.where(small, F32(_EI_C1[0]), F32(_EI_C2[0])).astype(F32)
    for a, b in zip(_EI_C1[1:], _EI_C2[1:]):
      p = fma32(p, t, np.where(small, F32(a), F32(b)).astype(F32))
    r = (p * x).astype(F32)
    return np.where(np.abs(x) == F32(1), (x * F32(np.inf)).astype(F32), r)


def xla_erf_f32(x):
  x = np.asarray(x, F32)
  a = [F32(v) for v in (1.128379143519084, 0.18520832239976145,
                        0.050955695062380861, 0.0034082910107109506,
                        0.00022905065861350646)]
  b = [F32(v) for v in (1.0, 0.49746925110067538, 0.11098505178285362,
                        0.014070470171167667, 0.0010179625278914885,
                        0.000023547966471313185, -1.1791602954361697e-7)]
  x2 = (x * x).astype(F32)
  p = fma32(x2, a[4], a[3]); p = fma32(x2, p, a[2]); p = fma32(x2, p, a[1])
  p = fma32(x2, p, a[0]); p = (x * p).astype(F32)
  q = fma32(x2, b[6], b[5])
  for c in (b[4], b[3], b[2], b[1], b[0]):
    q = fma32(x2, q, c)
  r = (p / q).astype(F32)
  return np.where(np.abs(x) >= F32(3.832506856900711), np.copysign(F32(1), x), r)


def ref_normal(key, shape, dtype):
  dtype = np.dtype(dtype)
  if dtype == np.float32:
    lo = np.nextafter(F32(-1), F32(0))
    u = ref_uniform(key, shape, F32, lo, F32(1))
    return (F32(np.sqrt(2)) * xla_erf_inv_f32(u)).astype(F32)
  # f16 / bf16: uniform in the narrow type, erf_inv in f32, round, multiply
  # by sqrt(2) rounded to the narrow type, round.
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype))
  u = ref_uniform(key, shape, dtype, lo, 1.)
  e = xla_erf_inv_f32(u.astype(F32)).astype(dtype)
  return (e.astype(F32) * F32(np.array(np.sqrt(2), dtype))).astype(dtype)


def nextafter32(x, toward):
  return np.nextafter(F32(x), F32(toward))


def ref_truncated_normal(key, lower, upper, shape):
  lower, upper = F32(lower), F32(upper)
  # XLA's algebraic simplifier rewrites x / sqrt2 as x * (1/sqrt2)
  inv = F32(F32(1) / F32(np.sqrt(2)))
  a = xla_erf_f32((lower * inv).astype(F32))
  b = xla_erf_f32((upper * inv).astype(F32))
  u = np.maximum(a, fma32(ref_uniform(key, shape, F32), F32(b - a), a))
  out = (F32(np.sqrt(2)) * xla_erf_inv_f32(u)).astype(F32)
  return np.clip(out, nextafter32(lower, np.inf), nextafter32(upper, -np.inf))


def ref_bernoulli(key, p, shape):
  return ref_uniform(key, shape, F32) < F32(p)


def ref_randint(key, shape, minval, maxval):
  k = ref_split(key, (2,))
  hi = ref_bits(k[0], 32, shape)
  lo = ref_bits(k[1], 32, shape)
  minval, maxval = np.int32(minval), np.int32(maxval)
  with np.errstate(over="ignore"):
    span = U32(np.int32(maxval - minval).view(U32))
  if maxval <= minval:
    span = U32(1)
  with np.errstate(over="ignore"):
    mult = U32(U32(2**16) % span)
    mult = U32(U32(mult * mult) % span)
    off = ((hi % span) * mult + (lo % span)).astype(U32) % span
    return (minval + off.astype(U32).view(np.int32)).astype(np.int32)


def ref_gumbel_f32(key, shape):
  tiny = F32(np.finfo(F32).tiny)
  u = ref_uniform(key, shape, F32, tiny, F32(1))
  return -xla_log_f32(-xla_log_f32(u))


def ref_categorical(key, logits, shape=None, axis=-1):
  logits = np.asarray(logits, F32)
  batch = tuple(np.delete(np.array(logits.shape), axis))
  if shape is None:
    shape = batch
  prefix = tuple(shape[:len(shape) - len(batch)])
  g = ref_gumbel_f32(key, prefix + logits.shape)   # axis=-1 case only
  return np.argmax((g + logits).astype(F32), axis=-1).astype(np.int32)


def ref_permutation(key, x):
  x = np.arange(x, dtype=np.int32) if np.ndim(x) == 0 else np.asarray(x)
  n = x.size
  rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
  for _ in range(rounds):
    ks = ref_split(key, (2,))
    key, sub = ks[0], ks[1]
    sk = ref_bits(sub, 32, x.shape)
    x = x[np.argsort(sk, kind="stable")]
  return x


def ref_cases():
  r = {}
  r["key_seed0"] = ref_seed(0)
  r["key_seed42"] = ref_seed(42)
  r["key_seed2147483647"] = ref_seed(2**31 - 1)
  r["key_seed_neg1"] = ref_seed(-1)
  r["key_seed_2p40_plus5"] = ref_seed(2**40 + 5)
  r["key_seed_2p32"] = ref_seed(2**32)
  r["key_x64_seed_neg1"] = ref_seed(-1, x64=True)
  r["key_x64_seed_2p40_plus5"] = ref_seed(2**40 + 5, x64=True)
  S = ref_seed
  r["split_key0"] = ref_split(S(0), (2,))
  r["split_key42_num5"] = ref_split(S(42), (5,))
  r["split_key7_shape2x3"] = ref_split(S(7), (2, 3))
  r["fold_in_key0_7"] = ref_fold_in(S(0), 7)
  r["fold_in_key42_2147483647"] = ref_fold_in(S(42), 2**31 - 1)
  r["fold_in_key42_4294967295"] = ref_fold_in(S(42), 2**32 - 1)
  r["bits_key0_u32_10"] = ref_bits(S(0), 32, (10,))
  r["bits_key1_u32_3x4"] = ref_bits(S(1), 32, (3, 4))
  r["bits_key1_u32_scalar"] = ref_bits(S(1), 32, ())
  r["bits_key2_u8_7"] = ref_bits(S(2), 8, (7,))
  r["bits_key2_u16_7"] = ref_bits(S(2), 16, (7,))
  r["bits_key2_u64_5"] = ref_bits(S(2), 64, (5,))
  r["uniform_key1_f32_scalar"] = ref_uniform(S(1), (), F32)
  r["uniform_key2_f32_7"] = ref_uniform(S(2), (7,), F32)
  r["uniform_key3_f32_2x3x4"] = ref_uniform(S(3), (2, 3, 4), F32)
  r["uniform_key4_f16_5"] = ref_uniform(S(4), (5,), np.float16)
  r["uniform_key5_bf16_5"] = ref_uniform(S(5), (5,), BF16)
  r["uniform_key6_f64_5"] = ref_uniform(S(6), (5,), F64)
  r["uniform_key7_f32_min-2_max3_6"] = ref_uniform(S(7), (6,), F32, -2., 3.)
  r["uniform_splitkey0_1_f32_7"] = ref_uniform(ref_split(S(0), (2,))[1], (7,), F32)
  r["uniform_foldin42_3_f32_7"] = ref_uniform(ref_fold_in(S(42), 3), (7,), F32)
  r["normal_key8_f32_8"] = ref_normal(S(8), (8,), F32)
  r["normal_key9_f32_2x3"] = ref_normal(S(9), (2, 3), F32)
  r["normal_key10_f16_4"] = ref_normal(S(10), (4,), np.float16)
  r["normal_key11_bf16_4"] = ref_normal(S(11), (4,), BF16)
  r["normal_key99_f32_256"] = ref_normal(S(99), (256,), F32)
  r["truncated_normal_key12_f32_min-2_max1.5_8"] = ref_truncated_normal(
      S(12), -2., 1.5, (8,))
  r["bernoulli_key13_p0.3_16"] = ref_bernoulli(S(13), 0.3, (16,))
  r["randint_key14_0_10_10"] = ref_randint(S(14), (10,), 0, 10)
  r["randint_key15_-5_1000_6"] = ref_randint(S(15), (6,), -5, 1000)
  r["randint_key16_3_4_5"] = ref_randint(S(16), (5,), 3, 4)
  r["randint_key17_big_span_6"] = ref_randint(S(17), (6,), -2**31, 2**31 - 1)
  lg1 = np.array([0.1, -1.0, 2.0, 0.5], F32)
  r["categorical_key18_4_shape12_logits"] = lg1
  r["categorical_key18_4_shape12"] = ref_categorical(S(18), lg1, shape=(12,))
  lg2 = np.array([[0.0, 1.0, 2.0, 3.0, 4.0], [1.5, -0.5, 0.25, 3.0, -2.0],
                  [-1.0, -1.0, -1.0, -1.0, -1.0]], F32)
  r["categorical_key19_3x5_axis-1_logits"] = lg2
  r["categorical_key19_3x5_axis-1"] = ref_categorical(S(19), lg2)
  r["permutation_key20_10"] = ref_permutation(S(20), 10)
  r["permutation_key21_100"] = ref_permutation(S(21), 100)
  xin = np.arange(6, dtype=np.int32) * 10
  r["permutation_key22_arange6x10_input"] = xin
  r["permutation_key22_arange6x10"] = ref_permutation(S(22), xin)
  return r


# --------------------------------------------------------------------------
# accuracy study (numbers quoted in tools/jax_random_algorithms.md)


def ulp_diff(a, b):
  a = np.asarray(a); b = np.asarray(b)
  it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
  ia = a.view(it).astype(np.int64); ib = b.view(it).astype(np.int64)
  sign = np.int64(1) << np.int64(8 * a.dtype.itemsize - 1)
  ia = np.where(ia < 0, -(ia + sign), ia)   # map to monotone integer line
  ib = np.where(ib < 0, -(ib + sign), ib)
  return np.abs(ia - ib)


def stats():
  from scipy import special
  n = 1 << 20
  print("N =", n)

  def report(tag, ref, got):
    d = ulp_diff(ref, got)
    print("  %-58s exact %.5f  max_ulp %d  mean_ulp %.4f" %
          (tag, np.mean(d == 0), d.max(), d.mean()))

  for dt, name in [(F32, "f32"), (np.float16, "f16"), (BF16, "bf16")]:
    key = K(1234)
    jn = np.asarray(jr.normal(key, (n,), dt))
    lo = np.nextafter(np.array(-1., dt), np.array(0., dt))
    ju = np.asarray(jr.uniform(key, (n,), dt, lo, 1.))
    print("normal", name)
    naive = (np.sqrt(2.0) * special.erfinv(ju.astype(F64))).astype(dt)
    report("sqrt2*scipy.erfinv(f64(u)) rounded once", naive, jn)
    if dt == F32:
      two_step = (F32(np.sqrt(2)) * special.erfinv(ju.astype(F64)).astype(F32)).astype(F32)
      report("f32(sqrt2)*f32(erfinv_f64(u))", two_step, jn)
    else:
      two_step = (special.erfinv(ju.astype(F64)).astype(dt).astype(F32) *
                  F32(np.array(np.sqrt(2), dt))).astype(dt)
      report("round(round(erfinv_f64(u))*sqrt2) (same roundings as XLA)", two_step, jn)
    emu = ref_normal(key, (n,), dt)
    report("emulated XLA (Giles poly + XLA log1p/log, fma)", emu, jn)

  print("erf_inv f32 on all u in the normal domain grid")
  x = np.asarray(jr.uniform(K(5), (n,), F32, -1., 1.))
  jx = np.asarray(jax.jit(jax.lax.erf_inv)(x))
  report("scipy.erfinv f64 rounded", special.erfinv(x.astype(F64)).astype(F32), jx)
  report("emulated XLA", xla_erf_inv_f32(x), jx)

  print("log f32 (x in (0, 1000))")
  x = np.concatenate([np.asarray(jr.uniform(K(6), (n,), F32, 1e-6, 1.)),
                      np.asarray(jr.uniform(K(7), (n // 4,), F32, 1., 1000.))])
  jl = np.asarray(jax.jit(jnp.log)(x))
  report("np.log(f64(x)) rounded (~correctly rounded)", np.log(x.astype(F64)).astype(F32), jl)
  report("emulated XLA Cephes log", xla_log_f32(x), jl)

  print("gumbel f32 (mode='low')")
  jg = np.asarray(jr.gumbel(K(8), (n,), F32))
  tiny = F32(np.finfo(F32).tiny)
  u = np.asarray(jr.uniform(K(8), (n,), F32, tiny, 1.)).astype(F64)
  report("-log(-log(u)) in f64 rounded", (-np.log(-np.log(u))).astype(F32), jg)
  report("emulated XLA", ref_gumbel_f32(K(8), (n,)), jg)

  print("categorical f32, logits 8 classes, N draws")
  lg = np.asarray(jr.normal(K(9), (8,), F32))
  jc = np.asarray(jr.categorical(K(10), lg, shape=(n // 8,)))
  g = (-np.log(-np.log(np.asarray(jr.uniform(K(10), (n // 8, 8), F32, tiny, 1.)).astype(F64))))
  naive = np.argmax(g + lg.astype(F64), -1)
  print("  f64 gumbel argmax: mismatching draws", int(np.sum(naive != jc)), "of", n // 8)
  emu = ref_categorical(K(10), lg, shape=(n // 8,))
  print("  emulated XLA:      mismatching draws", int(np.sum(emu != jc)), "of", n // 8)

  print("truncated_normal f32 (-2, 1.5)")
  jt = np.asarray(jr.truncated_normal(K(11), -2., 1.5, (n,), F32))
  s2 = np.sqrt(2.0)
  a, b = special.erf(-2 / s2), special.erf(1.5 / s2)
  f = np.asarray(jr.uniform(K(11), (n,), F32)).astype(F64)
  naive = np.clip(s2 * special.erfinv(f * (b - a) + a), -2, 1.5).astype(F32)
  naive = np.clip(naive, nextafter32(-2, 1), nextafter32(1.5, -2))
  report("all-f64 formula rounded", naive, jt)
  report("emulated XLA", ref_truncated_normal(K(11), -2., 1.5, (n,)), jt)


# --------------------------------------------------------------------------


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default=OUT)
  ap.add_argument("--verify", action="store_true",
                  help="check every case against the numpy reference")
  ap.add_argument("--stats", action="store_true",
                  help="print the accuracy study (needs scipy)")
  args = ap.parse_args()

  assert not jax.config.jax_enable_x64, "run with JAX defaults (x64 off)"
  assert jax.config.jax_default_prng_impl == "threefry2x32"
  assert jax.default_backend() == "cpu"
  part = bool(jax.config.jax_threefry_partitionable)

  cases = jax_cases()
  names = [n for n, _ in cases]
  assert len(set(names)) == len(names)
  assert not jax.config.jax_enable_x64

  import jaxlib
  header = [
      "# graft jax.random golden vectors. DO NOT EDIT: regenerate with",
      "#   python3 tools/make_random_vectors.py",
      "# generator: tools/make_random_vectors.py",
      "# jax %s, jaxlib %s, numpy %s, python %s, backend %s (%s)" % (
          jax.__version__, jaxlib.__version__, np.__version__,
          platform.python_version(), jax.default_backend(), platform.machine()),
      "# jax_threefry_partitionable=%s (JAX default in this version)" % part,
      "# jax_enable_x64=False except cases named *x64* / *_f64_* / *_u64_*",
      "# jax_default_prng_impl=%s, keys: legacy jax.random.PRNGKey(seed) uint32[2]"
      % jax.config.jax_default_prng_impl,
      "# date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime(
          "%Y-%m-%d %H:%M:%S UTC"),
      "# format: <case_name> <dtype> <shape: d0,d1,.. | scalar> <values row-major>",
      "#   ints decimal, bool 0/1, floats as hex bit patterns (f16/bf16 16-bit,",
      "#   f32 32-bit, f64 64-bit). *_logits / *_input lines are inputs.",
      "# transcendental-based cases (normal, truncated_normal, categorical)",
      "# reflect XLA:CPU's own log/log1p/erf/erf_inv kernels and FMA contraction;",
      "# see tools/jax_random_algorithms.md before asserting them bit-exactly.",
  ]
  lines = header + [fmt_line(n, v) for n, v in cases]
  os.makedirs(os.path.dirname(args.out), exist_ok=True)
  with open(args.out, "w") as f:
    f.write("\n".join(lines) + "\n")
  size = os.path.getsize(args.out)
  print("wrote %s: %d cases, %d bytes, jax_threefry_partitionable=%s" %
        (args.out, len(cases), size, part))

  if args.verify:
    ref = ref_cases()
    bad = 0
    for n, v in cases:
      r = np.asarray(ref[n])
      ok = (r.dtype == v.dtype and r.shape == v.shape and
            fmt_values(r) == fmt_values(v))
      if not ok:
        bad += 1
        print("MISMATCH", n, "\n  jax:", fmt_line(n, v), "\n  ref:", fmt_line(n, r))
    print("verify: %d/%d cases reproduced bit-exactly by the numpy reference"
          % (len(cases) - bad, len(cases)))
    if bad:
      sys.exit(1)

  if args.stats:
    stats()


if __name__ == "__main__":
  main()
