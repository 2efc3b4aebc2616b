#!/usr/bin/env python3
"""Record JAX's results for graft's jnp.fft (core/numpy/fft/fft.h) and jax.numpy's
complex-number functions (core/numpy/complex.h).

The vector format holds real arrays only, so a complex result is recorded as
stack([real, imag], -1) (ri() below; the C++ cases do the same) and a complex input is built
from two real inputs with lax.complex; gradients are then those of a real function of real
inputs, through JAX's complex rules.

Runs JAX 0.10.2 on CPU (x64 off) on fixed inputs and writes
tests/core/testdata/jnp_fft_vectors.txt, read by tests/core/numpy/fft_test.cc, in the format of
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
cx = jax.lax.complex


def ri(y):
  """A complex result as [..., 2] real and imaginary parts; a real one as it is."""
  return jnp.stack([jnp.real(y), jnp.imag(y)], -1) if jnp.iscomplexobj(y) else y


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
    # complex + fft: the transforms, with n / s, axes and norm
    "fft_real": (lambda x: ri(fft.fft(x)), [(8,)], True),
    "fft_c": (lambda a, b: ri(fft.fft(cx(a, b))), [(3, 6), (3, 6)], True),
    "fft_pad_axis0": (lambda a, b: ri(fft.fft(cx(a, b), n=5, axis=0)), [(4, 3), (4, 3)], True),
    "fft_crop": (lambda x: ri(fft.fft(x, n=3)), [(2, 6)], True),
    "fft_ortho": (lambda a, b: ri(fft.fft(cx(a, b), norm="ortho")), [(6,), (6,)], True),
    "ifft_axis0": (lambda a, b: ri(fft.ifft(cx(a, b), axis=0)), [(5, 3), (5, 3)], True),
    "ifft_forward": (lambda a, b: ri(fft.ifft(cx(a, b), norm="forward")), [(6,), (6,)], True),
    "rfft_even": (lambda x: ri(fft.rfft(x)), [(3, 8)], True),
    "rfft_n_axis0": (lambda x: ri(fft.rfft(x, n=7, axis=0)), [(6, 2)], True),
    "irfft": (lambda a, b: fft.irfft(cx(a, b)), [(2, 5), (2, 5)], True),
    "irfft_n_odd": (lambda a, b: fft.irfft(cx(a, b), n=7), [(3, 4), (3, 4)], True),
    "irfft_ortho": (lambda a, b: fft.irfft(cx(a, b), norm="ortho"), [(5,), (5,)], True),
    "fft2": (lambda a, b: ri(fft.fft2(cx(a, b))), [(3, 4, 5), (3, 4, 5)], True),
    "ifft2_s": (lambda a, b: ri(fft.ifft2(cx(a, b), s=(3, 6))), [(4, 5), (4, 5)], True),
    "fftn_axes": (lambda a, b: ri(fft.fftn(cx(a, b), axes=(0, 2))), [(3, 4, 5), (3, 4, 5)],
                  True),
    "fftn_rank4": (lambda x: ri(fft.fftn(x)), [(2, 3, 4, 2)], True),
    "ifftn_s": (lambda a, b: ri(fft.ifftn(cx(a, b), s=(2, 3))), [(3, 4), (3, 4)], True),
    "rfft2": (lambda x: ri(fft.rfft2(x)), [(3, 4, 6)], True),
    "irfft2": (lambda a, b: fft.irfft2(cx(a, b)), [(3, 4, 3), (3, 4, 3)], True),
    "rfftn_axes_ortho": (lambda x: ri(fft.rfftn(x, axes=(0, 2), norm="ortho")), [(4, 3, 5)],
                         True),
    "irfftn_s": (lambda a, b: fft.irfftn(cx(a, b), s=(4, 6)), [(3, 4, 4), (3, 4, 4)], True),
    "hfft": (lambda a, b: fft.hfft(cx(a, b)), [(2, 5), (2, 5)], True),
    "hfft_n_ortho": (lambda a, b: fft.hfft(cx(a, b), n=7, norm="ortho"), [(4,), (4,)], True),
    "ihfft": (lambda x: ri(fft.ihfft(x)), [(2, 6)], True),
    "ihfft_n_forward": (lambda x: ri(fft.ihfft(x, n=5, norm="forward")), [(7,)], True),
    "abs_fft_power": (lambda x: jnp.sum(jnp.abs(fft.fft(x)) ** 2), [(8,)], True),
    "sort_complex": (lambda a, b: ri(jnp.sort_complex(cx(jnp.round(a), jnp.round(b)))),
                     [(2, 6), (2, 6)], False),
    "sort_complex_real": (lambda x: ri(jnp.sort_complex(x)), [(7,)], False),
    "complex_arith": (lambda a, b, c, d: ri(cx(a, b) * cx(c, d) / (cx(c, d) + 3.0)
                                            - cx(a, d)),
                      [(2, 3), (2, 3), (2, 3), (2, 3)], True),
    "complex_exp_abs": (lambda a, b: jnp.abs(jnp.exp(cx(a, b))) + jnp.angle(cx(a, b)),
                        [(5,), (5,)], True),
    "complex_parts": (lambda a, b: ri(jnp.conj(cx(a, b))) + jnp.stack(
        [jnp.real(cx(a, b)), jnp.imag(cx(a, b))], -1), [(2, 3), (2, 3)], True),
    # eig / eigvals (sorted: the order is LAPACK's), poly and roots
    "eigvals_sorted": (lambda x: ri(jnp.sort_complex(jnp.linalg.eigvals(x))), [(4, 4)], False),
    "eigvals_batch": (lambda x: ri(jnp.sort_complex(jnp.linalg.eigvals(x))), [(2, 3, 3)],
                      False),
    "eig_values": (lambda x: ri(jnp.sort_complex(jnp.linalg.eig(x)[0])), [(5, 5)], False),
    "poly_real": (lambda x: jnp.poly(x), [(5,)], True),
    "poly_complex": (lambda a, b: ri(jnp.poly(cx(a, b))), [(3,), (3,)], True),
    "poly_matrix": (lambda x: ri(jnp.poly(x)), [(3, 3)], False),
    "roots": (lambda x: ri(jnp.sort_complex(jnp.roots(x))), [(5,)], False),
    "eigvals_grad": (lambda x: jnp.sum(jnp.abs(jnp.linalg.eigvals(x))), [(4, 4)], True),
    "roots_leading_zero": (lambda x: ri(jnp.sort_complex(jnp.roots(
        jnp.concatenate([jnp.zeros(1), x])))), [(4,)], False),
    "eigvals_complex": (lambda a, b: ri(jnp.sort_complex(jnp.linalg.eigvals(cx(a, b)))),
                        [(3, 3), (3, 3)], False),
    "eigvals_complex_grad": (lambda a, b: jnp.sum(jnp.abs(jnp.linalg.eigvals(cx(a, b)))),
                             [(3, 3), (3, 3)], True),
    "roots_complex": (lambda a, b: ri(jnp.sort_complex(jnp.roots(cx(a, b)))), [(4,), (4,)],
                      False),
}


def main():
  base.main_for(CASES, OUT, "jnp.fft helpers and complex functions on real arrays, for "
                "tests/core/numpy/fft_test.cc.", "make_jnp_fft_vectors")


if __name__ == "__main__":
  main()
