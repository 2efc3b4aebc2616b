#!/usr/bin/env python3
"""Record JAX's results for graft's jnp.linalg factorizations (core/lax/linalg.h).

Runs JAX 0.10.2 on CPU (x64 off) on fixed inputs and writes
tests/core/testdata/jnp_linalg_decomp_vectors.txt, read by
tests/core/numpy/linalg_decompositions_test.cc, in the format of tools/make_jnp_array_vectors.py
(whose writer this reuses): <case>.in<k> inputs (float32, seeded standard normal), <case>.out<k>
JAX's outputs, and for the cases marked with gradients <case>.ct (a fixed cotangent) and
<case>.grad<k> = d sum(out0 * ct) / d in<k>.

Each case first makes its input well conditioned where the function needs it (x x^T + n I for
cholesky, x + x^T for eigh, a shifted diagonal for solves) and removes the sign freedom of the
factors (columns scaled by the sign of a fixed entry), so values and gradients are unique; the
C++ test applies the same maps.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_linalg_decomp_vectors.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_jnp_array_vectors as base  # noqa: E402  (sets JAX_PLATFORMS=cpu first)

import jax.numpy as jnp  # noqa: E402

OUT = os.path.join(base.ROOT, "tests", "core", "testdata", "jnp_linalg_decomp_vectors.txt")
la = jnp.linalg


def T(x):
  return jnp.swapaxes(x, -1, -2)


def spd(x):
  n = x.shape[-1]
  return x @ T(x) + n * jnp.eye(n, dtype=x.dtype)


def shifted(x):
  return x + 3 * jnp.eye(x.shape[-1], dtype=x.dtype)


def flat(*xs):
  return jnp.concatenate([jnp.ravel(x) for x in xs])


def qr_fixed(x, mode):
  q, r = la.qr(x, mode=mode)
  sg = jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))
  return flat(q * sg[..., None, :], r * sg[..., :, None])


def svd_fixed(x):
  u, s, vh = la.svd(x, full_matrices=False)
  sg = jnp.sign(u[..., 0:1, :])
  return flat(s, u * sg, vh * T(sg))


def eigh_fixed(x):
  w, v = la.eigh(x + T(x))
  return flat(w, v * jnp.sign(v[..., 0:1, :]))


# A positive definite matrix and one that is not, as a batch.
INDEFINITE = jnp.array([[[4, 2, 0], [2, 3, 1], [0, 1, 2]], [[1, 2, 0], [2, 1, 0], [0, 0, 1]]],
                       jnp.float32)


# name: (function, input shapes, record gradients)
CASES = {
    "dchol": (lambda x: la.cholesky(spd(x)), [(4, 4)], True),
    "dchol_upper_batch": (lambda x: la.cholesky(spd(x), upper=True), [(2, 3, 3)], True),
    "dqr_reduced": (lambda x: qr_fixed(x, "reduced"), [(5, 3)], True),
    "dqr_complete": (lambda x: qr_fixed(x, "complete"), [(2, 3, 3)], True),
    "dqr_r": (lambda x: jnp.abs(la.qr(x, mode="r")), [(4, 3)], True),
    "dsvd": (svd_fixed, [(4, 3)], True),
    "dsvd_wide_batch": (svd_fixed, [(2, 3, 4)], True),
    "dsvd_values": (lambda x: la.svd(x, compute_uv=False), [(3, 5)], True),
    "dsvdvals": (lambda x: la.svdvals(x), [(2, 3, 4)], True),
    "deigh": (eigh_fixed, [(4, 4)], True),
    "deigh_upper": (lambda x: la.eigh(x, UPLO="U").eigenvalues, [(3, 3)], True),
    "deigvalsh": (lambda x: la.eigvalsh(x + T(x)), [(2, 3, 3)], True),
    "dsolve_vec": (lambda a, b: la.solve(shifted(a), b), [(4, 4), (4,)], True),
    "dsolve_batch": (lambda a, b: la.solve(shifted(a), b), [(2, 3, 3), (3, 2)], True),
    "dinv": (lambda x: la.inv(shifted(x)), [(2, 3, 3)], True),
    "ddet": (lambda x: la.det(x), [(2, 4, 4)], True),
    "dslogdet": (lambda x: la.slogdet(x), [(2, 3, 3)], False),
    "dslogdet_log": (lambda x: la.slogdet(x).logabsdet, [(4, 4)], True),
    "dlstsq": (lambda a, b: la.lstsq(a, b), [(5, 3), (5, 2)], False),
    "dlstsq_vec": (lambda a, b: la.lstsq(a, b), [(5, 3), (5,)], False),
    "dlstsq_x": (lambda a, b: la.lstsq(a, b)[0], [(5, 3), (5, 2)], True),
    "dpinv": (lambda x: la.pinv(x), [(4, 3)], True),
    "dcond": (lambda x: la.cond(x), [(3, 3)], True),
    "dcond_fro": (lambda x: la.cond(x, "fro"), [(3, 3)], True),
    "dmatrix_rank": (lambda x: la.matrix_rank(x), [(2, 4, 3)], False),
    "dmatrix_rank_1": (lambda x: la.matrix_rank(x[:, :1] @ x[:1, :]), [(4, 4)], False),
    "dtensorinv": (lambda x: la.tensorinv(x, ind=2), [(2, 3, 6)], True),
    "dtensorsolve": (lambda a, b: la.tensorsolve(a, b), [(2, 3, 6), (2, 3)], True),
    # Not positive definite (the second matrix): NaN in its factor's triangle, zeros kept in
    # the other.
    "dchol_indefinite": (lambda: la.cholesky(INDEFINITE), [], False),
    "dchol_indefinite_upper": (lambda: la.cholesky(INDEFINITE, upper=True), [], False),
}


def main():
  base.main_for(CASES, OUT,
                "# jnp.linalg factorizations for graft's tests/core/numpy/linalg_decompositions_test.cc.",
                "make_jnp_linalg_decomp_vectors")


if __name__ == "__main__":
  main()
