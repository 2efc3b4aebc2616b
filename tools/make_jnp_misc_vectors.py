#!/usr/bin/env python3
"""Record JAX's results for graft's jnp misc functions (core/numpy/pad.h,
core/numpy/misc.h, core/numpy/npy_io.h, transforms/numpy_functional.h).

Runs jax.numpy (JAX 0.10.2 on CPU, default flags: x64 off) on the fixed inputs below and
writes tests/core/testdata/jnp_misc_vectors.txt, read by tests/core/numpy/misc_test.cc, in
tools/make_jnp_tail_vectors.py's format:

    <case>.in<k>   <dtype> <shape|scalar> <values...>   the inputs, as given in CASES
    <case>.out<k>  ...                                   JAX's output(s)
    <case>.grad<k> ...                                   d sum(out0 * ct) / d in<k> (jax.grad),
                                                         ct = 1 + 0.25 * arange(out0.size)

Gradients are recorded for the float inputs a case lists (True: all of them). It also writes
.npy files with numpy.save (ml_dtypes' bfloat16 for bf16) into tests/core/testdata/npy/, with
their values as npy_<name>.out0 lines, for jnp.load's test.

    --check DIR   instead: np.load every DIR/*.npy (files graft's save wrote: misc_test
                  writes them to $TEST_UNDECLARED_OUTPUTS_DIR/npy) and compare them with the
                  arrays of the same name in testdata/npy; exits nonzero on a mismatch.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_misc_vectors.py [--check DIR]
"""

import glob
import os
import sys

import ml_dtypes
import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_jnp_tail_vectors import fmt, record  # noqa: E402  the same line format

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "jnp_misc_vectors.txt")
NPY = os.path.join(ROOT, "tests", "core", "testdata", "npy")

rng = np.random.default_rng(23)
M34 = rng.standard_normal((3, 4)).astype(np.float32)
M13 = rng.standard_normal((1, 3)).astype(np.float32)
X234 = rng.standard_normal((2, 3, 4)).astype(np.float32)
V7 = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0], np.float32)
I6 = np.array([3, 0, -2, 5, 0, 7], np.int32)
I23 = I6.reshape(2, 3)
B3 = np.array([[True, False, True], [False, False, True]])
P4 = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
P5 = np.array([1.0, -3.0, 0.5, 2.0, -1.5], np.float32)
P3 = np.array([2.0, 1.0, -1.0], np.float32)
HX = np.array([0.1, 0.5, 0.5, 2.0, 3.3, 4.0, -1.0, 2.2], np.float32)
HY = np.array([1.0, 1.5, -0.5, 0.0, 2.5, 2.5, 0.7, 1.9], np.float32)
HW = np.linspace(0.5, 2.0, 8).astype(np.float32)
S103 = rng.standard_normal((10, 3)).astype(np.float32)
FX = np.linspace(-1.0, 2.0, 8).astype(np.float32)
FY = (1.0 + 2.0 * FX - 0.7 * FX ** 2 + 0.1 * rng.standard_normal(8)).astype(np.float32)
FY2 = np.stack([FY, np.cos(FX)], axis=1).astype(np.float32)
XS = np.linspace(-2.0, 2.0, 9).astype(np.float32)
A22 = np.arange(4, dtype=np.float32).reshape(2, 2)
B23 = np.arange(6, dtype=np.float32).reshape(2, 3) + 10
C12 = np.array([[20.0, 21.0]], np.float32)
D13 = np.array([[30.0, 31.0, 32.0]], np.float32)
B21 = np.array([[7.0], [8.0]], np.float32)
V3 = np.array([40.0, 41.0, 42.0], np.float32)
BUF = np.array([1.5, -2.0, 3.25, 1e6, -7.0], np.float32)

# name -> (function, inputs, gradients: True (every float input), or the input numbers)
CASES = {
    # pad modes
    "pad_constant": (lambda a: jnp.pad(a, ((1, 0), (2, 1)), constant_values=1.5), [M34], True),
    "pad_constant_pairs": (lambda a: jnp.pad(a, ((1, 2), (2, 1)),
                                             constant_values=((-1.0, 2.0), (3.5, -4.0))),
                           [M34], True),
    "pad_constant_int": (lambda a: jnp.pad(a, 1, constant_values=(2.7, -1.2)), [I23], False),
    "pad_edge": (lambda a: jnp.pad(a, ((1, 2), (2, 1)), mode="edge"), [M34], True),
    "pad_wrap": (lambda a: jnp.pad(a, ((5, 1), (2, 6)), mode="wrap"), [M34], True),
    "pad_reflect": (lambda a: jnp.pad(a, ((2, 4), (3, 1)), mode="reflect"), [M34], True),
    "pad_reflect_odd": (lambda a: jnp.pad(a, ((2, 4), (3, 1)), mode="reflect",
                                          reflect_type="odd"), [M34], True),
    "pad_reflect_size1": (lambda a: jnp.pad(a, ((2, 1), (1, 1)), mode="reflect"), [M13], True),
    "pad_symmetric": (lambda a: jnp.pad(a, ((4, 1), (2, 5)), mode="symmetric"), [M34], True),
    "pad_symmetric_odd": (lambda a: jnp.pad(a, ((4, 1), (2, 5)), mode="symmetric",
                                            reflect_type="odd"), [M34], True),
    "pad_linear_ramp": (lambda a: jnp.pad(a, ((2, 1), (1, 3)), mode="linear_ramp",
                                          end_values=((1.0, -2.0), (0.5, 3.0))), [M34], True),
    "pad_linear_ramp_int": (lambda a: jnp.pad(a, ((3, 2),), mode="linear_ramp",
                                              end_values=((10, -4),)), [I6], False),
    "pad_maximum": (lambda a: jnp.pad(a, ((1, 2), (2, 1)), mode="maximum"), [M34], True),
    "pad_minimum_len": (lambda a: jnp.pad(a, ((1, 2), (2, 1)), mode="minimum",
                                          stat_length=((2, 1), (1, 3))), [M34], True),
    "pad_mean_len": (lambda a: jnp.pad(a, 2, mode="mean", stat_length=2), [M34], True),
    "pad_median": (lambda a: jnp.pad(a, ((1, 1), (2, 0)), mode="median"), [M34], True),
    "pad_mean_int": (lambda a: jnp.pad(a, ((1, 0), (2, 2)), mode="mean"), [I23], False),
    "pad_empty": (lambda a: jnp.pad(a, ((1, 0), (0, 2)), mode="empty"), [M34], False),
    # take
    "take_wrap": (lambda a: jnp.take(a, jnp.array([[5, -7], [0, 3]]), axis=1, mode="wrap"),
                  [M34], True),
    "take_clip_flat": (lambda a: jnp.take(a, jnp.array([-3, 2, 10]), mode="clip"), [V7], True),
    "take_fill_value": (lambda a: jnp.take(a, jnp.array([-5, 1, 3, -1]), axis=0, mode="fill",
                                           fill_value=-9.0), [M34], True),
    "take_flat_fill": (lambda a: jnp.take(a, jnp.array([0, 11, 12, -1, -13])), [M34], True),
    "take_int_fill": (lambda a: jnp.take(a, jnp.array([-7, 2, 6])), [I6], False),
    # repeat with arrays of repeats
    "repeat_array": (lambda a: jnp.repeat(a, jnp.array([2, 0, 1]), axis=0), [M34], True),
    "repeat_total_long": (lambda a: jnp.repeat(a, jnp.array([1, 2, 0, 3]), axis=1,
                                               total_repeat_length=8), [M34], True),
    "repeat_total_cut": (lambda a: jnp.repeat(a, jnp.array([1, 2, 0, 3, 1, 1, 2]),
                                              total_repeat_length=5), [V7], True),
    "repeat_flat": (lambda a: jnp.repeat(a, jnp.array([1, 0, 2, 1, 3, 1])), [I23], False),
    "repeat_one": (lambda a: jnp.repeat(a, jnp.array([2]), axis=1, total_repeat_length=8),
                   [M34], True),
    # the one-argument where
    "where_one": (lambda a: jnp.where(a, size=5, fill_value=-1), [B3], False),
    # block
    "block_2x2": (lambda a, b, c, d: jnp.block([[a, b], [c, d]]), [A22, B23, C12, D13], True),
    "block_1d": (lambda a, b: jnp.block([a, b]), [V7, V3], True),
    "block_promote": (lambda a, b, c: jnp.block([[a, b], [c]]), [A22, B21, V3], True),
    # histograms
    "histogram2d": (lambda x, y: jnp.histogram2d(x, y, bins=3), [HX, HY], False),
    "histogram2d_edges": (lambda x, y, w: jnp.histogram2d(
        x, y, bins=[jnp.array([-1.0, 0.0, 2.0, 4.5]), 2], range=[(0.0, 1.0), (0.0, 2.0)],
        weights=w, density=True), [HX, HY, HW], (2,)),
    "histogramdd": (lambda s: jnp.histogramdd(s, bins=[2, 3, jnp.array([-2.0, 0.0, 0.5, 2.0])]),
                    [S103], False),
    "histogramdd_w": (lambda s, w: jnp.histogramdd(s, bins=2, range=[(-1, 1), (-2, 2), (0, 3)],
                                                   weights=w, density=True),
                      [S103, np.linspace(0.1, 1.0, 10).astype(np.float32)], (1,)),
    # polynomials
    "polydiv": (jnp.polydiv, [P5, P3], True),
    "polydiv_short": (jnp.polydiv, [P3, P5], True),
    "polyfit": (lambda x, y: jnp.polyfit(x, y, 2), [FX, FY], True),
    "polyfit_w2": (lambda x, y, w: jnp.polyfit(x, y, 3, w=w), [FX, FY2, HW], True),
    "polyfit_full": (lambda x, y: jnp.polyfit(x, y, 1, full=True), [FX, FY], False),
    # function-taking helpers
    "piecewise": (lambda x: jnp.piecewise(x, [x < 0, x > 1], [lambda v: v * v,
                                                              lambda v: 3 * v - 1, 0.5]),
                  [XS], True),
    "piecewise_no_otherwise": (lambda x: jnp.piecewise(x, [x < -1, x > 0], [lambda v: -v, 2.0]),
                               [XS], True),
    "piecewise_int": (lambda x: jnp.piecewise(x, [x > 0], [lambda v: v * 2, lambda v: v - 1]),
                      [I6], False),
    "apply_along_axis": (lambda a: jnp.apply_along_axis(
        lambda v: jnp.sum(v * jnp.arange(v.shape[0])), 1, a), [X234], True),
    "apply_along_axis_vec": (lambda a: jnp.apply_along_axis(
        lambda v: jnp.stack([v.max(), v.min() * 2]), 0, a), [M34], True),
    "apply_along_axis_mat": (lambda a: jnp.apply_along_axis(lambda v: jnp.outer(v, v), 1, a),
                             [M34], True),
    "apply_over_axes": (lambda a: jnp.apply_over_axes(jnp.sum, a, [0, 2]), [X234], True),
    "apply_over_axes_keep": (lambda a: jnp.apply_over_axes(
        lambda x, ax: jnp.cumsum(x, axis=ax), a, [1, -1]), [X234], True),
    "fromfunction": (lambda: jnp.fromfunction(lambda i, j: i * 10 + j * j, (3, 4)), [], False),
    "fromfunction_int": (lambda: jnp.fromfunction(lambda i, j, k: i - j * k, (2, 3, 2),
                                                  dtype=jnp.int32), [], False),
    "vectorize": (lambda a, b: jnp.vectorize(lambda x, y: x * y + jnp.sin(x))(a, b),
                  [V7.reshape(7, 1), P4], True),
    "vectorize_sig": (lambda a, b: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(a, b),
                      [X234, P4], True),
    "vectorize_sig_multi": (lambda a: jnp.vectorize(lambda v: (jnp.max(v), v - jnp.mean(v)),
                                                    signature="(n)->(),(n)")(a), [X234], True),
    "vectorize_excluded": (lambda a, p: jnp.vectorize(lambda x, q: jnp.polyval(q, x),
                                                      excluded={1})(a, p), [V7, P4], True),
    # frombuffer (the C++ test builds the same bytes from in0)
    "frombuffer": (lambda b: jnp.frombuffer(np.asarray(b).tobytes(), dtype=jnp.float32,
                                            count=3, offset=4), [BUF], False),
    "frombuffer_i32": (lambda b: jnp.frombuffer(np.asarray(b).tobytes(), dtype=jnp.int32),
                       [BUF], False),
}

# .npy files numpy writes, for jnp.load's test: name -> array.
NPY_FILES = {
    "f32": M34,
    "f64_fortran": np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3) / 3),
    "i32": I23,
    "i64": np.array([-(2 ** 40), 5, 7, -1], np.int64),
    "u8": np.array(200, np.uint8),
    "u32": np.array([1, 4000000000], np.uint32),
    "bool": B3,
    "f16": np.array([1.5, -2.25, 65504.0], np.float16),
    "bf16": np.array([1.5, -2.25, 3e38], ml_dtypes.bfloat16),
    "empty": np.zeros((0, 3), np.float32),
}


def check(directory):
  bad = 0
  files = sorted(glob.glob(os.path.join(directory, "*.npy")))
  for path in files:
    name = os.path.basename(path)
    got = np.load(path)
    if got.dtype == "V2":
      got = got.view(ml_dtypes.bfloat16)
    want = NPY_FILES[name[:-4]]
    ok = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    print("%-16s %s %s %s" % (name, got.dtype, got.shape, "ok" if ok else "MISMATCH"))
    bad += not ok
  if not files or bad:
    sys.exit("%d of %d files differ" % (bad, len(files)))


def main():
  if len(sys.argv) == 3 and sys.argv[1] == "--check":
    check(sys.argv[2])
    return
  assert jax.__version__ == "0.10.2", jax.__version__
  lines = ["# made by tools/make_jnp_misc_vectors.py with JAX %s on %s"
           % (jax.__version__, jax.default_backend())]
  record(CASES, lines)
  os.makedirs(NPY, exist_ok=True)
  for name, arr in NPY_FILES.items():
    np.save(os.path.join(NPY, name + ".npy"), arr)
    lines.append(fmt("npy_%s.out0" % name, arr))
  with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
  main()
