#!/usr/bin/env python3
"""Record JAX's results for graft's composable jnp.linalg functions (core/numpy/linalg/linalg.h).

Runs JAX 0.10.2 on CPU (x64 off) on fixed inputs and writes
tests/core/testdata/jnp_linalg_vectors.txt, read by tests/core/numpy/linalg_test.cc, in the
format of tools/make_jnp_array_vectors.py (whose writer this reuses): <case>.in<k> inputs
(float32, seeded standard normal), <case>.out0 JAX's output, and for the cases marked with
gradients <case>.ct (a fixed cotangent) and <case>.grad<k> = d sum(out0 * ct) / d in<k>.

Usage: python3 tools/make_jnp_linalg_vectors.py (any Python with JAX 0.10.2)
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_jnp_array_vectors as base  # noqa: E402  (sets JAX_PLATFORMS=cpu first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

OUT = os.path.join(base.ROOT, "tests", "core", "testdata", "jnp_linalg_vectors.txt")
la = jnp.linalg
inf = np.inf


def shifted(x):
  """x + 3 I: well conditioned for the seeded inputs (as tests/core/numpy/linalg_test.cc)."""
  return x + 3 * jnp.eye(x.shape[-1], dtype=x.dtype)


# name: (function, input shapes, record gradients)
CASES = {
    "lvn_2": (lambda x: la.vector_norm(x), [(2, 3, 4)], True),
    "lvn_1_axis": (lambda x: la.vector_norm(x, ord=1, axis=-1), [(2, 3, 4)], True),
    "lvn_inf_axis": (lambda x: la.vector_norm(x, ord=inf, axis=-1), [(2, 3, 4)], False),
    "lvn_ninf_axis": (lambda x: la.vector_norm(x, ord=-inf, axis=-1), [(2, 3, 4)], False),
    "lvn_0": (lambda x: la.vector_norm(x, ord=0), [(2, 3, 4)], False),
    "lvn_3_keep": (lambda x: la.vector_norm(x, ord=3, axis=1, keepdims=True), [(2, 3, 4)],
                   True),
    "lvn_half": (lambda x: la.vector_norm(x, ord=0.5), [(5,)], True),
    "lmn_fro": (lambda x: la.matrix_norm(x), [(2, 3, 4)], True),
    "lmn_1": (lambda x: la.matrix_norm(x, ord=1), [(2, 3, 4)], True),
    "lmn_m1": (lambda x: la.matrix_norm(x, ord=-1), [(2, 3, 4)], False),
    "lmn_inf": (lambda x: la.matrix_norm(x, ord=inf), [(2, 3, 4)], True),
    "lmn_ninf_keep": (lambda x: la.matrix_norm(x, ord=-inf, keepdims=True), [(2, 3, 4)], False),
    "lnorm_none": (lambda x: la.norm(x), [(2, 3, 4)], True),
    "lnorm_vec3": (lambda x: la.norm(x, ord=3), [(6,)], False),
    "lnorm_mat_inf": (lambda x: la.norm(x, ord=inf), [(3, 4)], False),
    "lmp_0": (lambda x: la.matrix_power(x, 0), [(2, 3, 3)], False),
    "lmp_1": (lambda x: la.matrix_power(x, 1), [(3, 3)], False),
    "lmp_5": (lambda x: la.matrix_power(0.5 * x, 5), [(2, 3, 3)], True),
    "lmd_vec_ends": (lambda a, b, c, d: la.multi_dot([a, b, c, d]), [(4,), (4, 3), (3, 5), (5,)],
                     True),
    "lmd_mats": (lambda a, b, c: la.multi_dot([a, b, c]), [(2, 4), (4, 3), (3, 5)], True),
    "lvecdot": (lambda a, b: la.vecdot(a, b), [(2, 3, 4), (3, 4)], True),
    "lvecdot_axis0": (lambda a, b: la.vecdot(a, b, axis=0), [(3, 4), (3, 4)], False),
    "ldiagonal_1": (lambda x: la.diagonal(x, offset=1), [(2, 3, 4)], True),
    "ltrace_m1": (lambda x: la.trace(x, offset=-1), [(2, 4, 3)], True),
    "ltensordot": (lambda a, b: la.tensordot(a, b, axes=1), [(2, 3), (3, 4)], False),
    "lcross": (lambda a, b: la.cross(a, b), [(2, 3), (2, 3)], True),
    "matrix_transpose": (lambda x: jnp.matrix_transpose(x), [(2, 3, 4)], False),
    "vecdot": (lambda a, b: jnp.vecdot(a, b), [(5,), (2, 5)], False),
    "matvec": (lambda a, b: jnp.matvec(a, b), [(2, 3, 4), (4,)], True),
    "vecmat": (lambda a, b: jnp.vecmat(a, b), [(3,), (2, 3, 4)], True),
    # The singular-value norms, norm's axis / keepdims and negative matrix powers (appended:
    # a case's inputs are seeded by its position, so the cases above keep theirs).
    "lmn_2": (lambda x: la.matrix_norm(x, ord=2), [(2, 3, 4)], True),
    "lmn_m2": (lambda x: la.matrix_norm(x, ord=-2), [(2, 4, 3)], True),
    "lmn_nuc_keep": (lambda x: la.matrix_norm(x, ord="nuc", keepdims=True), [(2, 3, 4)], True),
    "lnorm_mat_2": (lambda x: la.norm(x, ord=2), [(3, 4)], True),
    "lnorm_nuc": (lambda x: la.norm(x, ord="nuc"), [(4, 3)], True),
    "lnorm_axis_3_keep": (lambda x: la.norm(x, ord=3, axis=1, keepdims=True), [(2, 3, 4)], True),
    "lnorm_axes_1": (lambda x: la.norm(x, ord=1, axis=(2, 0)), [(2, 3, 4)], True),
    "lnorm_axes_m2_keep": (lambda x: la.norm(x, ord=-2, axis=(0, 2), keepdims=True),
                           [(3, 2, 4)], True),
    "lnorm_axes_fro": (lambda x: la.norm(x, axis=(-1, -3)), [(2, 3, 4)], True),
    "lnorm_axes_ninf_keep": (lambda x: la.norm(x, ord=-inf, axis=(1, 0), keepdims=True),
                             [(3, 4, 2)], False),
    "lnorm_none_keep": (lambda x: la.norm(x, keepdims=True), [(2, 3)], True),
    "lmp_3": (lambda x: la.matrix_power(x, 3), [(2, 3, 3)], True),
    "lmp_m1": (lambda x: la.matrix_power(shifted(x), -1), [(3, 3)], True),
    "lmp_m3": (lambda x: la.matrix_power(0.5 * shifted(x), -3), [(2, 3, 3)], True),
    "lmp_m6": (lambda x: la.matrix_power(0.5 * shifted(x), -6), [(3, 3)], True),
}


def main():
  base.main_for(CASES, OUT, "# jnp.linalg results for graft's tests/core/numpy/linalg_test.cc.",
                "make_jnp_linalg_vectors")


if __name__ == "__main__":
  main()
