#!/usr/bin/env python3
"""Record JAX's results for graft's later jax.numpy functions (core/numpy/reductions.h,
core/numpy/searching.h, core/numpy/array_creation.h, core/numpy/shapes.h, core/numpy/polynomial.h).

Runs jax.numpy (JAX 0.10.2 on CPU, default flags: x64 off) on the fixed inputs below and
writes tests/core/testdata/jnp_tail_vectors.txt, read by tests/core/numpy/tail_test.cc. Lines:

    <case>.in<k>   <dtype> <shape|scalar> <values...>   the inputs, as given in CASES
    <case>.out<k>  ...                                   JAX's output(s)
    <case>.grad<k> ...                                   d sum(out0 * ct) / d in<k> (jax.grad),
                                                         ct = 1 + 0.25 * arange(out0.size)

(gradients for the cases marked True, with respect to every float input). Floats are written
with 9 significant digits (exact for float32), ints in decimal, bool as 0 / 1. The C++ test
repeats each case's call by name.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_tail_vectors.py
"""

import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "jnp_tail_vectors.txt")

nan, inf = np.nan, np.inf
rng = np.random.default_rng(17)
M34 = rng.standard_normal((3, 4)).astype(np.float32)
M34N = M34.copy()
M34N[0, 1] = nan
M34N[2, :] = nan
V7 = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0], np.float32)
V7N = np.array([3.0, nan, 4.0, 1.0, nan, 9.0, 2.0], np.float32)
I6 = np.array([3, 0, -2, 5, 0, 7], np.int32)
SORTED = np.array([-2.0, 0.0, 0.0, 1.5, 3.0, 3.0, 8.0], np.float32)
QUERY = np.array([-3.0, 0.0, 1.0, 3.0, 8.0, 9.0, nan], np.float32)
Q3 = np.array([0.0, 0.3, 0.75], np.float32)
X2 = rng.standard_normal((2, 5)).astype(np.float32)
Y5 = rng.standard_normal((5,)).astype(np.float32)
P4 = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
P2 = np.array([1.5, -2.0], np.float32)
XP = np.array([0.0, 1.0, 1.0, 2.5, 4.0], np.float32)
FP = np.array([1.0, 3.0, 2.0, -1.0, 0.5], np.float32)
XI = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.9, 4.0, 5.0], np.float32)
H = np.array([0.1, 0.5, 0.5, 2.0, 3.3, 4.0, -1.0, 2.2], np.float32)
B3 = np.array([[True, False, True], [False, False, True]])
K1 = np.array([1, 0, 1, 0, 1, 2], np.int32)
K2 = np.array([3.0, 3.0, 1.0, 2.0, 1.0, 1.0], np.float32)

# name -> (function, inputs, record gradients)
CASES = {
    # statistics
    "std": (lambda a: jnp.std(a, axis=1), [M34], True),
    "std_ddof": (lambda a: jnp.std(a, ddof=1), [M34], True),
    "nansum": (lambda a: jnp.nansum(a, axis=1), [M34N], True),
    "nanprod": (lambda a: jnp.nanprod(a, axis=0), [M34N], True),
    "nanmax": (lambda a: jnp.nanmax(a, axis=1), [M34N], True),
    "nanmin": (lambda a: jnp.nanmin(a, axis=1, keepdims=True), [M34N], True),
    "nanmean": (lambda a: jnp.nanmean(a, axis=1), [M34N], True),
    "nanmean_all": (jnp.nanmean, [V7N], True),
    "nanvar": (lambda a: jnp.nanvar(a, axis=1), [M34N], True),
    "nanstd_ddof": (lambda a: jnp.nanstd(a, axis=0, ddof=1), [M34N], False),
    "nanargmax": (lambda a: jnp.nanargmax(a, axis=1), [M34N], False),
    "nanargmin": (jnp.nanargmin, [V7N], False),
    "nansum_int": (jnp.nansum, [I6], False),
    "count_nonzero": (lambda a: jnp.count_nonzero(a, axis=0), [I6.reshape(2, 3)], False),
    "quantile_linear": (lambda a, q: jnp.quantile(a, q), [V7, Q3], True),
    "quantile_axis": (lambda a, q: jnp.quantile(a, q, axis=1), [M34, Q3], True),
    "quantile_keep": (lambda a: jnp.quantile(a, 0.4, axis=0, keepdims=True), [M34], True),
    "quantile_lower": (lambda a, q: jnp.quantile(a, q, method="lower"), [V7, Q3], False),
    "quantile_higher": (lambda a, q: jnp.quantile(a, q, method="higher"), [V7, Q3], False),
    "quantile_nearest": (lambda a: jnp.quantile(a, jnp.array([0.25, 0.5, 0.8]),
                                                method="nearest"), [V7], False),
    "quantile_midpoint": (lambda a, q: jnp.quantile(a, q, method="midpoint"), [V7, Q3], False),
    "quantile_nan": (lambda a: jnp.quantile(a, 0.5, axis=1), [M34N], False),
    "nanquantile": (lambda a, q: jnp.nanquantile(a, q, axis=1), [M34N, Q3], False),
    "percentile": (lambda a: jnp.percentile(a, jnp.array([10.0, 50.0, 90.0])), [V7], True),
    "nanpercentile": (lambda a: jnp.nanpercentile(a, 30.0), [V7N], False),
    "median": (lambda a: jnp.median(a, axis=1), [M34], True),
    "median_int": (jnp.median, [I6], False),
    "nanmedian": (lambda a: jnp.nanmedian(a, axis=1), [M34N], False),
    "cov": (jnp.cov, [M34], True),
    "cov_y": (lambda a, b: jnp.cov(a, b), [X2, Y5], True),
    "cov_cols": (lambda a: jnp.cov(a, rowvar=False, bias=True), [M34], True),
    "cov_one": (jnp.cov, [Y5], False),
    "corrcoef": (jnp.corrcoef, [M34], True),
    # searching and counting
    "searchsorted_left": (jnp.searchsorted, [SORTED, QUERY], False),
    "searchsorted_right": (lambda a, v: jnp.searchsorted(a, v, side="right"),
                           [SORTED, QUERY], False),
    "digitize": (jnp.digitize, [QUERY, SORTED], False),
    "digitize_right_desc": (lambda x, b: jnp.digitize(x, b[::-1], right=True),
                            [QUERY, SORTED], False),
    "bincount": (lambda x: jnp.bincount(x, length=6), [I6], False),
    "bincount_w": (lambda x, w: jnp.bincount(x, w, length=5),
                   [I6, np.arange(6, dtype=np.float32)], True),
    "isin": (jnp.isin, [I6, np.array([0, 5, 9], np.int32)], False),
    "isin_invert": (lambda a, b: jnp.isin(a, b, invert=True),
                    [V7, np.array([4.0, 9.0], np.float32)], False),
    "nonzero": (lambda a: jnp.nonzero(a, size=5, fill_value=-1), [B3], False),
    "flatnonzero": (lambda a: jnp.flatnonzero(a, size=3), [I6], False),
    "argwhere": (lambda a: jnp.argwhere(a, size=4), [B3], False),
    "lexsort": (lambda a, b: jnp.lexsort((b, a)), [K1, K2], False),
    "histogram_bin_edges": (lambda a: jnp.histogram_bin_edges(a, bins=4), [H], False),
    "histogram": (lambda a: jnp.histogram(a, bins=4), [H], False),
    "histogram_range": (lambda a, w: jnp.histogram(a, bins=3, range=(0.0, 3.0), weights=w,
                                                  density=True),
                        [H, np.linspace(0.5, 2.0, 8).astype(np.float32)], True),
    # construction
    "tril_indices": (lambda: jnp.tril_indices(3, k=-1, m=4), [], False),
    "triu_indices": (lambda: jnp.triu_indices(4, k=1), [], False),
    "triu_indices_from": (lambda a: jnp.triu_indices_from(a, k=2), [M34], False),
    "diag_indices_from": (jnp.diag_indices_from, [np.zeros((3, 3, 3), np.float32)], False),
    "indices": (lambda: jnp.indices((2, 3)), [], False),
    "logspace": (lambda: jnp.logspace(0.0, 2.0, 5), [], False),
    "logspace_base": (lambda: jnp.logspace(1.0, 3.0, 4, endpoint=False, base=2.0), [], False),
    "geomspace": (lambda: jnp.geomspace(1.0, 1000.0, 4), [], False),
    "geomspace_neg": (lambda: jnp.geomspace(-2.0, -32.0, 5), [], False),
    "vander": (jnp.vander, [P4], True),
    "vander_inc": (lambda x: jnp.vander(x, 3, increasing=True), [P4], True),
    "diagflat": (lambda a: jnp.diagflat(a, 1), [np.arange(4, dtype=np.float32).reshape(2, 2)],
                 False),
    "bartlett": (lambda: jnp.bartlett(7), [], False),
    "blackman": (lambda: jnp.blackman(6), [], False),
    "hamming": (lambda: jnp.hamming(5), [], False),
    "hanning": (lambda: jnp.hanning(8), [], False),
    # shapes
    "array_split": (lambda a: jnp.array_split(a, 3), [V7], False),
    "array_split_axis": (lambda a: jnp.array_split(a, 3, axis=1), [M34], False),
    "hsplit": (lambda a: jnp.hsplit(a, 2), [M34], False),
    "vsplit": (lambda a: jnp.vsplit(a, 3), [M34], False),
    "unstack": (lambda a: jnp.unstack(a, axis=1), [M34], False),
    "broadcast_arrays": (jnp.broadcast_arrays, [P4.reshape(4, 1), P2], False),
    "rollaxis": (lambda a: jnp.rollaxis(a, 2, 0), [np.arange(24, dtype=np.float32)
                                                    .reshape(2, 3, 4)], False),
    "append": (jnp.append, [M34, P2], False),
    "append_axis": (lambda a, b: jnp.append(a, b, axis=0), [M34, M34[:1]], False),
    "delete": (lambda a: jnp.delete(a, jnp.array([0, -1, 2]), axis=1), [M34], False),
    "delete_flat": (lambda a: jnp.delete(a, 3), [M34], False),
    "resize": (lambda a: jnp.resize(a, (3, 5)), [V7], False),
    "select": (lambda a: jnp.select([a < 0, a > 3], [a * 2, a - 10], -1.0), [V7], True),
    "array_equal": (lambda a: jnp.array_equal(a, a), [V7N], False),
    "array_equal_nan": (lambda a: jnp.array_equal(a, a, equal_nan=True), [V7N], False),
    "array_equiv": (lambda a: jnp.array_equiv(a, a[:1]), [M34], False),
    # polynomials and integration
    "polyval": (jnp.polyval, [P4, V7], True),
    "polyadd": (jnp.polyadd, [P4, P2], True),
    "polysub": (jnp.polysub, [P2, P4], True),
    "polymul": (jnp.polymul, [P4, P2], True),
    "polyder": (lambda p: jnp.polyder(p, 2), [P4], True),
    "polyint": (lambda p: jnp.polyint(p, 2, k=jnp.array([1.0, -2.0])), [P4], True),
    "trapezoid": (lambda y: jnp.trapezoid(y, dx=0.5), [M34], True),
    "trapezoid_x": (lambda y, x: jnp.trapezoid(y, x, axis=0), [M34, np.array([0.0, 1.0, 3.0],
                                                                               np.float32)],
                    True),
    "interp": (jnp.interp, [XI, XP, FP], True),
    "interp_lr": (lambda x, xp, fp: jnp.interp(x, xp, fp, left=-7.0, right=7.0),
                  [XI, XP, FP], False),
}


def fmt(name, arr):
  arr = np.asarray(arr)
  dt = str(arr.dtype)
  shape = ",".join(str(d) for d in arr.shape) if arr.ndim else "scalar"
  if arr.dtype == np.bool_:
    vals = ["1" if v else "0" for v in arr.ravel()]
  elif np.issubdtype(arr.dtype, np.integer):
    vals = [str(int(v)) for v in arr.ravel()]
  else:
    digits = 17 if arr.dtype == np.float64 else 9
    vals = ["%.*g" % (digits, v) for v in arr.astype(np.float64).ravel()]
  return " ".join([name, dt, shape] + vals)


def outputs(r):
  """A function's outputs as a flat list (a tuple's list items, as histogramdd's edges, too)."""
  if isinstance(r, (tuple, list)):
    out = []
    for x in r:
      out.extend(x if isinstance(x, list) else [x])
    return out
  return [r]


def record(cases, lines):
  """Appends each case's inputs, outputs and gradients to lines (see the module comment).

  A case's gradient entry is True (every float input) or the numbers of the inputs."""
  for name, (fn, ins, grads) in cases.items():
    ins = [np.asarray(x) for x in ins]
    for k, x in enumerate(ins):
      lines.append(fmt("%s.in%d" % (name, k), x))
    outs = outputs(fn(*ins))
    for k, o in enumerate(outs):
      lines.append(fmt("%s.out%d" % (name, k), o))
    if grads:
      out0 = np.asarray(outs[0])
      ct = (1 + 0.25 * np.arange(out0.size)).astype(out0.dtype).reshape(out0.shape)
      for k, x in enumerate(ins):
        if not np.issubdtype(x.dtype, np.floating) or (grads is not True and k not in grads):
          continue

        def loss(xk, k=k):
          args = list(ins)
          args[k] = xk
          return jnp.sum(outputs(fn(*args))[0] * ct)

        lines.append(fmt("%s.grad%d" % (name, k), jax.grad(loss)(x)))


def write_vectors(cases, out, maker):
  """Runs each case of `cases` and writes its lines (the format above) to `out`."""
  assert jax.__version__ == "0.10.2", jax.__version__
  lines = ["# made by tools/%s with JAX %s on %s"
           % (maker, jax.__version__, jax.default_backend())]
  record(cases, lines)
  with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")


def main():
  write_vectors(CASES, OUT, "make_jnp_tail_vectors.py")

if __name__ == "__main__":
  main()
