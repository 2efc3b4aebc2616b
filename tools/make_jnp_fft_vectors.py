#!/usr/bin/env python3
"""Record JAX's results for graft's jnp.fft helpers (core/ops_numpy_fft.h) and jax.numpy's
complex-number functions on real arrays (core/ops_numpy_complex.h).

Runs JAX 0.10.2 on CPU (x64 off) on fixed inputs and writes
tests/core/testdata/jnp_fft_vectors.txt, read by tests/core/numpy_fft_test.cc, in the format of
tools/make_jnp_array_vectors.py (whose writer this reuses): <case>.in<k> inputs (float32,
seeded standard normal), <case>.out0 JAX's output and, for the cases marked with gradients,
<case>.ct (a fixed cotangent) and <case>.grad<k> = d sum(out0 * ct) / d in<k>.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_fft_vectors.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_jnp_array_vectors as base  # noqa: E402  (sets JAX_PLATFORMS=cpu first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

OUT = os.path.join(base.ROOT, "tests", "core", "testdata", "jnp_fft_vectors.txt")
fft = jnp.fft

# name: (function, input shapes, record gradients)
CASES = {
    "fftfreq_8": (lambda: fft.fftfreq(8), [], False),
    "fftfreq_7_d": (lambda: fft.fftfreq(7, d=0.3), [], False),
    "fftfreq_1": (lambda: fft.fftfreq(1), [], False),
    "fftfreq_0": (lambda: fft.fftfreq(0), [], False),
    "rfftfreq_8": (lambda: fft.rfftfreq(8), [], False),
    "rfftfreq_9_d": (lambda: fft.rfftfreq(9, d=2.5), [], False),
    "rfftfreq_1": (lambda: fft.rfftfreq(1), [], False),
    "fftshift_all": (lambda x: fft.fftshift(x), [(3, 4, 5)], True),
    "fftshift_axis": (lambda x: fft.fftshift(x, axes=-1), [(3, 5)], True),
    "fftshift_axes": (lambda x: fft.fftshift(x, axes=(0, 2)), [(3, 4, 5)], False),
    "ifftshift_all": (lambda x: fft.ifftshift(x), [(3, 4, 5)], True),
    "ifftshift_axis0": (lambda x: fft.ifftshift(x, axes=0), [(5, 2)], False),
    "shift_roundtrip": (lambda x: fft.ifftshift(fft.fftshift(x)), [(7, 6)], False),
    "real": (lambda x: jnp.real(x), [(2, 3)], True),
    "imag": (lambda x: jnp.imag(x), [(2, 3)], True),
    "conj": (lambda x: jnp.conj(x), [(2, 3)], True),
    "conjugate": (lambda x: jnp.conjugate(x), [(2, 3)], True),
    "angle": (lambda x: jnp.angle(x), [(2, 5)], True),
    "angle_deg": (lambda x: jnp.angle(x, deg=True), [(2, 5)], True),
    "angle_int": (lambda x: jnp.angle((x * 3).astype(jnp.int32)), [(6,)], False),
    "angle_zeros": (lambda x: jnp.angle(jnp.array([0.0, -2.0, np.inf, -np.inf, 1e30],
                                                  jnp.float32) + 0 * x[0]), [(1,)], False),
    "iscomplex": (lambda x: jnp.iscomplex(x), [(2, 3)], False),
    "isreal": (lambda x: jnp.isreal(x), [(2, 3)], False),
    "isreal_int": (lambda x: jnp.isreal(x.astype(jnp.int32)), [(4,)], False),
}


def main():
  base.main_for(CASES, OUT, "jnp.fft helpers and complex functions on real arrays, for "
                "tests/core/numpy_fft_test.cc.", "make_jnp_fft_vectors")


if __name__ == "__main__":
  main()
