#!/usr/bin/env python3
"""Record JAX's results for graft's jax.numpy set operations and index tricks
(core/numpy/setops.h, core/numpy/index_tricks.h) into
tests/core/testdata/jnp_setops_vectors.txt, read by tests/core/numpy/setops_test.cc.

JAX 0.10.2 on CPU (x64 off) runs each case of CASES; the lines (inputs, outputs, and jax.grad
of sum(out0 * ct) for the cases marked True) are written by make_jnp_tail_vectors.py's
write_vectors, whose docstring gives the format. The C++ test repeats each call by name.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_setops_vectors.py
"""

import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_jnp_tail_vectors import write_vectors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "jnp_setops_vectors.txt")

nan = np.nan
# ties, NaNs, negative values, multi-dim
U = np.array([[3.0, 1.0, 2.0, 3.0], [nan, 1.0, -4.0, nan], [2.0, 2.0, 0.5, 3.0]], np.float32)
UI = np.array([5, 1, 5, 2, 1, 1, 7, 2], np.int32)
ROWS = np.array([[1, 2], [0, 5], [1, 2], [0, 5], [0, 1]], np.int32)
A = np.array([4.0, 1.0, 7.0, 1.0, 9.0, 4.0, 3.0], np.float32)
B = np.array([[1.0, 8.0, 4.0], [4.0, 10.0, 2.0]], np.float32)
AU = np.array([2.0, 5.0, 1.0, 8.0], np.float32)
BU = np.array([5.0, 3.0, 8.0, 0.0, 6.0], np.float32)
AI = np.array([3, 1, 3, 6, 2], np.int32)
P = np.array([[5.0, -1.0, 3.0, 3.0, 0.5, 8.0], [2.0, 2.0, -7.0, 4.0, 1.0, 0.0]], np.float32)
PN = np.array([3.0, nan, 1.0, -2.0, nan, 5.0], np.float32)
PI = np.array([4, 0, 4, 9, 1, 4, 2], np.int32)
M34 = np.array([[0.5, -1.0, 2.0, 3.5], [4.0, 0.0, -2.5, 1.0], [1.5, 7.0, -3.0, 2.0]], np.float32)
M33 = np.arange(9, dtype=np.float32).reshape(3, 3) + 0.5
C0 = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], np.float32)
C1 = np.array([10.0, 20.0, 30.0], np.float32)
C2 = np.array([[-1.0], [-2.0]], np.float32)
CH = np.array([[0, 2, 1], [1, 0, 2]], np.int32)
CHO = np.array([[3, -1, 1], [-4, 5, 2]], np.int32)
COND = np.array([True, False, True], bool)
CONDI = np.array([0, 1, 1, 0, 1], np.int32)
TZ = np.array([0.0, 0.0, 3.0, 0.0, 1.5, 0.0], np.float32)
TZ2 = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]], np.float32)
V3 = np.array([7.0, -8.0, 9.0], np.float32)
MI = (np.array([3, 6, 6, 0], np.int32), np.array([4, 0, 1, 5], np.int32))
MIOOR = (np.array([3, -1, 8], np.int32), np.array([9, 0, -2], np.int32))
E = np.zeros((0,), np.float32)
A4 = np.array([4.0, 1.0, 7.0, 1.0], np.float32)
FLAT = np.array([[0, 7, 13], [23, -1, 24]], np.int32)


def st(x):
  return tuple(x)


CASES = {
    # unique and friends
    "unique": (jnp.unique, [U], False),
    "unique_all_returns": (lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                                return_counts=True), [U], False),
    "unique_int": (lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                        return_counts=True), [UI], False),
    "unique_size": (lambda a: jnp.unique(a, size=8), [U], False),
    "unique_size_fill": (lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                              return_counts=True, size=8, fill_value=-9),
                         [UI], False),
    "unique_size_cut": (lambda a: jnp.unique(a, return_counts=True, size=2), [UI], False),
    "unique_axis0": (lambda a: jnp.unique(a, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True), [ROWS], False),
    "unique_axis1": (lambda a: jnp.unique(a, axis=1), [ROWS.T], False),
    "unique_axis0_size": (lambda a: jnp.unique(a, axis=0, size=5, fill_value=-1), [ROWS], False),
    "unique_nan_distinct": (lambda a: jnp.unique(a, equal_nan=False), [U], False),
    "unique_all": (lambda a: st(jnp.unique_all(a)), [U], False),
    "unique_all_size": (lambda a: st(jnp.unique_all(a, size=6, fill_value=0)), [UI], False),
    "unique_counts": (lambda a: st(jnp.unique_counts(a)), [UI], False),
    "unique_inverse": (lambda a: st(jnp.unique_inverse(a)), [U], False),
    "unique_values": (jnp.unique_values, [U], False),
    "unique_values_size": (lambda a: jnp.unique_values(a, size=10), [UI], False),
    # set operations
    "intersect1d": (jnp.intersect1d, [A, B], False),
    "intersect1d_indices": (lambda a, b: jnp.intersect1d(a, b, return_indices=True), [A, B],
                            False),
    "intersect1d_unique": (lambda a, b: jnp.intersect1d(a, b, assume_unique=True,
                                                        return_indices=True), [AU, BU], False),
    "intersect1d_size": (lambda a, b: jnp.intersect1d(a, b, size=4), [A, B], False),
    "intersect1d_size_fill": (lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=5,
                                                           fill_value=-1.0), [A, B], False),
    "intersect1d_unique_size": (lambda a, b: jnp.intersect1d(a, b, assume_unique=True,
                                                             return_indices=True, size=3),
                                [AU, BU], False),
    "intersect1d_int_float": (jnp.intersect1d, [AI, A], False),
    "union1d": (jnp.union1d, [A, B], False),
    "union1d_size": (lambda a, b: jnp.union1d(a, b, size=10), [A, B], False),
    "union1d_size_fill": (lambda a, b: jnp.union1d(a, b, size=10, fill_value=-5.0), [AI, A],
                          False),
    "setdiff1d": (jnp.setdiff1d, [A, B], False),
    "setdiff1d_size": (lambda a, b: jnp.setdiff1d(a, b, size=4), [A, B], False),
    "setdiff1d_size_fill": (lambda a, b: jnp.setdiff1d(a, b, size=3, fill_value=-2.0),
                            [B, A], False),
    "setdiff1d_unique": (lambda a, b: jnp.setdiff1d(a, b, assume_unique=True), [AU, BU], False),
    "setdiff1d_unique_size": (lambda a, b: jnp.setdiff1d(a, b, assume_unique=True, size=4),
                              [AU, BU], False),
    "setxor1d": (jnp.setxor1d, [A, B], False),
    "setxor1d_size": (lambda a, b: jnp.setxor1d(a, b, size=8), [A, B], False),
    "setxor1d_size_fill": (lambda a, b: jnp.setxor1d(a, b, size=9, fill_value=-1.0), [A, B],
                           False),
    "setxor1d_unique": (lambda a, b: jnp.setxor1d(a, b, assume_unique=True), [AU, BU], False),
    "setxor1d_unique_size": (lambda a, b: jnp.setxor1d(a, b, assume_unique=True, size=8),
                             [AU, BU], False),
    # empty inputs
    "unique_empty": (lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                          return_counts=True), [E], False),
    "unique_empty_fill": (lambda a: jnp.unique(a, size=2, fill_value=3), [E], False),
    "union1d_empty": (jnp.union1d, [E, A4], False),
    "setdiff1d_empty": (jnp.setdiff1d, [A4, E], False),
    "setdiff1d_empty_size": (lambda a, b: jnp.setdiff1d(b, a, size=2), [A4, E], False),
    "intersect1d_empty": (jnp.intersect1d, [E, A4], False),
    "intersect1d_empty_size": (lambda a, b: jnp.intersect1d(a, b, size=2), [E, A4], False),
    "setxor1d_empty_size": (lambda a, b: jnp.setxor1d(a, b, size=4), [E, A4], False),
    "setxor1d_both_empty": (lambda a: jnp.setxor1d(a, a, size=2), [E], False),
    # partition
    "partition_one": (lambda a: jnp.partition(a, 0), [A4[:1]], False),
    "partition": (lambda a: jnp.partition(a, 2), [P], True),
    "partition_axis0": (lambda a: jnp.partition(a, 0, axis=0), [P], True),
    "partition_neg_kth": (lambda a: jnp.partition(a, -2), [PI], False),
    "partition_nan": (lambda a: jnp.partition(a, 2), [PN], False),
    "argpartition": (lambda a: jnp.argpartition(a, 3), [P], False),
    "argpartition_nan": (lambda a: jnp.argpartition(a, 2), [PN], False),
    "argpartition_ties": (lambda a: jnp.argpartition(a, 2), [PI], False),
    "argpartition_axis0": (lambda a: jnp.argpartition(a, 1, axis=0), [P], False),
    # index arithmetic
    "ravel_multi_index": (lambda i, j: jnp.ravel_multi_index((i, j), (7, 6)), list(MI), False),
    "ravel_multi_index_f": (lambda i, j: jnp.ravel_multi_index((i, j), (7, 6), order="F"),
                            list(MI), False),
    "ravel_multi_index_wrap": (lambda i, j: jnp.ravel_multi_index((i, j), (4, 5), mode="wrap"),
                               list(MIOOR), False),
    "ravel_multi_index_clip": (lambda i, j: jnp.ravel_multi_index((i, j), (4, 5), mode="clip"),
                               list(MIOOR), False),
    "unravel_index": (lambda i: jnp.unravel_index(i, (4, 6)), [FLAT], False),
    "unravel_index_scalar": (lambda i: jnp.unravel_index(i, (2, 3)), [np.int32(5)], False),
    "unravel_index_3d": (lambda i: jnp.unravel_index(i, (2, 3, 4)), [FLAT], False),
    "ix_": (lambda a, b: jnp.ix_(a, b), [np.array([0, 2], np.int32), AI], False),
    "mask_indices": (lambda: jnp.mask_indices(3, jnp.triu), [], False),
    "mask_indices_k": (lambda: jnp.mask_indices(4, jnp.tril, -1, size=7), [], False),
    # selection
    "choose": (lambda a, x, y, z: jnp.choose(a, [x, y, z]), [CH, C0, C1, C2], True),
    "choose_wrap": (lambda a, x, y, z: jnp.choose(a, [x, y, z], mode="wrap"),
                    [CHO, C0, C1, C2], True),
    "choose_clip": (lambda a, x, y, z: jnp.choose(a, [x, y, z], mode="clip"),
                    [CHO, C0, C1, C2], True),
    "compress": (lambda c, a: jnp.compress(c, a, axis=1), [COND, M34], True),
    "compress_flat": (lambda c, a: jnp.compress(c, a), [CONDI, M34], True),
    "compress_size": (lambda c, a: jnp.compress(c, a, axis=0, size=3, fill_value=-1.0),
                      [COND, M34], True),
    "compress_short_cond": (lambda c, a: jnp.compress(c, a, axis=1), [CONDI[:3], M34], False),
    "extract": (lambda c, a: jnp.extract(c, a), [M34 > 1.0, M34], True),
    "extract_size": (lambda c, a: jnp.extract(c, a, size=8, fill_value=9.0), [M34 > 1.0, M34],
                     True),
    "insert_scalar": (lambda a, v: jnp.insert(a, 2, v), [A, V3], True),
    "insert_scalar_axis": (lambda a, v: jnp.insert(a, 1, v, axis=1), [M34, V3], True),
    "insert_array": (lambda a, v: jnp.insert(a, jnp.array([0, 2, 2, -1]), v[:1], axis=0),
                     [M34, V3], True),
    "insert_many": (lambda a, v: jnp.insert(a, jnp.array([3, 0, 9]), v), [A, V3], True),
    "insert_slice": (lambda a, v: jnp.insert(a, slice(0, 4, 2), v[:2], axis=1), [M34, V3],
                     True),
    "insert_row": (lambda a, v: jnp.insert(a, jnp.array([1]), v[None, :], axis=0),
                   [M33, V3], True),
    "trim_zeros": (jnp.trim_zeros, [TZ], False),
    "trim_zeros_f": (lambda a: jnp.trim_zeros(a, "f"), [TZ], False),
    "trim_zeros_b": (lambda a: jnp.trim_zeros(a, trim="b"), [TZ], False),
    "trim_zeros_2d": (jnp.trim_zeros, [TZ2], False),
    "trim_zeros_axis": (lambda a: jnp.trim_zeros(a, axis=1), [TZ2], False),
    "fill_diagonal": (lambda a, v: jnp.fill_diagonal(a, v, inplace=False), [M34, V3[:2]], True),
    "fill_diagonal_scalar": (lambda a: jnp.fill_diagonal(a, -1.0, inplace=False), [M33], True),
    "fill_diagonal_3d": (lambda a, v: jnp.fill_diagonal(a, v, inplace=False),
                         [np.arange(8, dtype=np.float32).reshape(2, 2, 2), V3], True),
}


def main():
  write_vectors(CASES, OUT, "make_jnp_setops_vectors.py")

if __name__ == "__main__":
  main()
