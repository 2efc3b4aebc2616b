#!/usr/bin/env python3
"""Record JAX's answers for graft's integer dtypes int8, int16, uint16, uint64.

Runs JAX 0.10.2 on CPU and writes tests/core/testdata/int_dtype_vectors.txt, read by
tests/core/int_dtypes_test.cc, plus .npy files that numpy writes (tests/core/testdata/npy/).
One vector per line, "name dtype shape values...": integers in exact decimal (u64 values do
not fit a double), floats with repr (17 digits), bool as 0 / 1.

Tables and cases (x64 on unless said):
  promote.strong  [15, 15] jnp.promote_types-style result of (ones(a) + ones(b)) over DTYPES, as
                  2 * index + weak_type (u64 with a signed int is a weak float64 in JAX)
  promote.weak    [15, 3] the same for ones(a) + w, w in (1, 1.0, 1j)
  convert.<src>.<dst>  lax.convert_element_type of SRC_VALUES[src] (in) to dst (out)
  <op>.<dtype>.out     op on BIN_A / BIN_B (or UN) of that dtype
  reduce.<op>.<dtype>  sum / prod with x64 OFF for i8, i16, u16 (JAX's default 32-bit
                       accumulators, which graft uses), on for u64; max, min, argmax, argmin,
                       cumsum, sort, argsort
  bits.<dtype>     jax.random.bits(jax.random.key(42) as raw threefry key, (10,), dtype)
  iinfo.<dtype>    bits, min, max
  can_cast.<c>     [13, 13] np.can_cast over REAL
  issubdtype       [13, 4] jnp.issubdtype(a, c) for c in (integer, signedinteger,
                   unsignedinteger, number)
  bitwise_count.<dtype>, take.<dtype>, scatter_add.<dtype>

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_int_dtype_vectors.py
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "int_dtype_vectors.txt")
NPY = os.path.join(ROOT, "tests", "core", "testdata", "npy")

# graft's names in this order are the test's DTYPES table.
DTYPES = [("bool", jnp.bool_), ("u8", jnp.uint8), ("u16", jnp.uint16), ("u32", jnp.uint32),
          ("u64", jnp.uint64), ("i8", jnp.int8), ("i16", jnp.int16), ("i32", jnp.int32),
          ("i64", jnp.int64), ("f16", jnp.float16), ("bf16", jnp.bfloat16),
          ("f32", jnp.float32), ("f64", jnp.float64), ("c64", jnp.complex64),
          ("c128", jnp.complex128)]
REAL = DTYPES[:13]
INTS = [d for d in DTYPES[1:9]]
NEW = [d for d in INTS if d[0] in ("i8", "i16", "u16", "u64")]
NAME = {np.dtype(t).name: n for n, t in DTYPES}

lines = ["# made by tools/make_int_dtype_vectors.py with JAX %s on cpu" % jax.__version__]


def fmt_values(x):
  x = np.asarray(x)
  if x.dtype == np.bool_:
    return [str(int(v)) for v in x.ravel()]
  if np.issubdtype(x.dtype, np.integer):
    return [str(int(v)) for v in x.ravel()]
  return [repr(float(v)) for v in np.asarray(x, np.float64).ravel()]


def put(name, x, dtype_name=None):
  x = np.asarray(x)
  d = dtype_name or NAME[x.dtype.name]
  shape = "scalar" if x.ndim == 0 else ",".join(str(s) for s in x.shape)
  lines.append(" ".join([name, d, shape] + fmt_values(x)))


def index_of(dt):
  return [np.dtype(t) for _, t in DTYPES].index(np.dtype(dt))


# Promotion.
strong = np.zeros((15, 15), np.int64)
for i, (_, a) in enumerate(DTYPES):
  for j, (_, b) in enumerate(DTYPES):
    r = jnp.ones(2, a) + jnp.ones(2, b)
    strong[i, j] = 2 * index_of(r.dtype) + int(r.weak_type)
put("promote.strong", strong, "i64")
weak = np.zeros((15, 3), np.int64)
for i, (_, a) in enumerate(DTYPES):
  for j, w in enumerate((1, 1.0, 1j)):
    r = jnp.ones(2, a) + w
    weak[i, j] = 2 * index_of(r.dtype) + int(r.weak_type)
put("promote.weak", weak, "i64")

# Conversions: values every source dtype holds exactly, its edges included.
INT_SRC = {
    "bool": [0, 1],
    "u8": [0, 1, 127, 128, 200, 255],
    "u16": [0, 1, 127, 128, 255, 256, 32767, 32768, 65535],
    "u32": [0, 1, 255, 256, 65535, 65536, 2**31, 2**32 - 1],
    "u64": [0, 1, 255, 65535, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 12345678901234567890],
    "i8": [-128, -127, -1, 0, 1, 100, 127],
    "i16": [-32768, -129, -128, -1, 0, 127, 128, 255, 256, 32767],
    "i32": [-2**31, -65536, -32769, -129, -1, 0, 128, 255, 65535, 2**31 - 1],
    "i64": [-2**63, -2**40 - 3, -2**31 - 1, -300, -1, 0, 300, 65537, 2**32 + 7, 2**63 - 1],
}
FLOAT_SRC = [float("nan"), float("-inf"), float("inf"), -1e20, -70000.5, -129.7, -128.4, -1.5,
             -0.5, 0.0, 0.5, 1.5, 127.9, 255.5, 300.2, 32767.5, 65535.5, 70000.0, 1e10, 1e20]
for sname, st in REAL:
  if sname in INT_SRC:
    src = np.array(INT_SRC[sname], np.dtype(st) if sname != "bool" else np.bool_)
  else:
    vals = FLOAT_SRC if sname not in ("f16",) else [v for v in FLOAT_SRC if not abs(v) > 65504 or abs(v) == float("inf") or v != v]
    src = np.array(vals, np.float64).astype(np.dtype(st))
  src_j = jnp.asarray(src)
  for dname, dt in REAL:
    if sname not in ("i8", "i16", "u16", "u64") and dname not in ("i8", "i16", "u16", "u64"):
      continue
    put("convert.%s.%s.in" % (sname, dname), np.asarray(src_j), sname)
    put("convert.%s.%s.out" % (sname, dname), np.asarray(lax.convert_element_type(src_j, dt)),
        dname)

# Elementwise ops on each new dtype (and i32 / u32 as a check of the harness).
BIN = {
    "i8": ([-128, -128, 127, -7, 7, -7, 100, 5, -1, 0, 64, -3],
           [-1, 1, 1, 2, -2, -2, 3, 0, 7, 3, 2, 9]),
    "i16": ([-32768, -32768, 32767, -7, 7, -7, 300, 5, -1, 0, 16384, -300],
            [-1, 1, 1, 2, -2, -2, 200, 0, 15, 3, 2, 17]),
    "u16": ([65535, 0, 65535, 7, 300, 40000, 12345, 5, 1, 0, 256, 9],
            [1, 1, 65535, 2, 200, 30000, 7, 0, 15, 3, 16, 17]),
    "u64": ([2**64 - 1, 0, 2**64 - 1, 7, 2**63, 12345678901234567890, 3, 5, 1, 0, 2**40, 9],
            [1, 1, 2**64 - 1, 2, 2, 3, 7, 0, 63, 64, 24, 65]),
}
BIN_OPS = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply,
    "lax_div": lax.div, "lax_rem": lax.rem, "floor_divide": jnp.floor_divide,
    "remainder": jnp.remainder, "left_shift": jnp.left_shift, "right_shift": jnp.right_shift,
    "bitwise_and": jnp.bitwise_and, "bitwise_or": jnp.bitwise_or,
    "bitwise_xor": jnp.bitwise_xor, "maximum": jnp.maximum, "minimum": jnp.minimum,
    "equal": jnp.equal, "less": jnp.less, "greater_equal": jnp.greater_equal,
}
UN_OPS = {"negative": jnp.negative, "abs": jnp.abs, "sign": jnp.sign, "invert": jnp.invert,
          "bitwise_count": jnp.bitwise_count, "square": jnp.square}
for dname, dt in NEW:
  a = jnp.asarray(np.array(BIN[dname][0], np.dtype(dt)))
  b = jnp.asarray(np.array(BIN[dname][1], np.dtype(dt)))
  put("bin.%s.a" % dname, np.asarray(a))
  put("bin.%s.b" % dname, np.asarray(b))
  for op, f in BIN_OPS.items():
    if op in ("left_shift", "right_shift"):
      bb = jnp.asarray(np.array(BIN[dname][1], np.dtype(dt)) % (8 * np.dtype(dt).itemsize + 2))
      put("bin.%s.%s.b" % (dname, op), np.asarray(bb))
      put("bin.%s.%s" % (dname, op), np.asarray(f(a, bb)))
    elif op in ("floor_divide", "remainder", "lax_div", "lax_rem"):
      put("bin.%s.%s" % (dname, op), np.asarray(f(a, b)))
    else:
      put("bin.%s.%s" % (dname, op), np.asarray(f(a, b)))
  for op, f in UN_OPS.items():
    put("un.%s.%s" % (dname, op), np.asarray(f(a)))
  # Arithmetic with a weak scalar keeps the dtype and wraps.
  put("scalar.%s.add100" % dname, np.asarray(a + 100))
  put("scalar.%s.mul3" % dname, np.asarray(a * 3))

# Reductions.
RED = {
    "i8": [100, 27, 1, -128, 5, -3, 127, 0],
    "i16": [30000, 2767, 1, -32768, 5, -3, 32767, 0],
    "u16": [65535, 1, 300, 0, 7, 65535, 2, 9],
    "u64": [2**64 - 1, 1, 2**63, 0, 7, 12345678901234567890, 2, 9],
}
for dname, dt in NEW:
  x64 = dname == "u64"
  jax.config.update("jax_enable_x64", x64)
  x = jnp.asarray(np.array(RED[dname], np.dtype(dt)))
  put("reduce.%s.in" % dname, np.asarray(x))
  put("reduce.sum.%s" % dname, np.asarray(jnp.sum(x)))
  put("reduce.prod.%s" % dname, np.asarray(jnp.prod(x[:4])))
  jax.config.update("jax_enable_x64", True)
  x = jnp.asarray(np.array(RED[dname], np.dtype(dt)))
  put("reduce.max.%s" % dname, np.asarray(jnp.max(x)))
  put("reduce.min.%s" % dname, np.asarray(jnp.min(x)))
  put("reduce.argmax.%s" % dname, np.asarray(jnp.argmax(x)))
  put("reduce.argmin.%s" % dname, np.asarray(jnp.argmin(x)))
  put("reduce.cumsum.%s" % dname, np.asarray(jnp.cumsum(x)))
  put("reduce.sort.%s" % dname, np.asarray(jnp.sort(x)))
  put("reduce.argsort.%s" % dname, np.asarray(jnp.argsort(x, stable=True)))
  idx = jnp.asarray(np.array([3, 0, 7, 7, 1], np.dtype(dt) if dname != "u64" else np.uint64))
  put("take.%s" % dname, np.asarray(jnp.take(x, idx.astype(dt))))
  put("scatter_add.%s" % dname, np.asarray(x.at[jnp.array([0, 0, 2])].add(
      jnp.asarray(np.array(RED[dname][:3], np.dtype(dt))))))

# Random bits: the raw threefry key [0, 42] (jax.random.PRNGKey(42)).
key = jax.random.PRNGKey(42)
for dname, dt in (("u8", jnp.uint8), ("u16", jnp.uint16), ("u32", jnp.uint32),
                  ("u64", jnp.uint64)):
  put("bits.%s" % dname, np.asarray(jax.random.bits(key, (10,), dt)))

# dtype facts.
for dname, dt in INTS:
  i = jnp.iinfo(dt)
  put("iinfo.%s" % dname, np.array([i.bits, i.min, 0], np.int64), "i64")
  lines.append("iinfo.%s.max u64 scalar %d" % (dname, int(i.max)))
for casting in ("safe", "same_kind"):
  t = np.array([[np.can_cast(np.dtype(a), np.dtype(b), casting=casting) for _, b in REAL]
                for _, a in REAL])
  put("can_cast.%s" % casting, t)
cats = (jnp.integer, jnp.signedinteger, jnp.unsignedinteger, jnp.number)
put("issubdtype", np.array([[jnp.issubdtype(a, c) for c in cats] for _, a in REAL]))

# .npy files numpy writes, for the load / save round trip.
for dname, dt in NEW:
  np.save(os.path.join(NPY, dname + ".npy"),
          np.array(BIN[dname][0], np.dtype(dt)).reshape(3, 4))

with open(OUT, "w") as f:
  f.write("\n".join(lines) + "\n")
print("wrote", OUT, len(lines), "lines")
