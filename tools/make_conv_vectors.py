#!/usr/bin/env python3
"""Record JAX's results for graft's convolution and windowed reductions (core/lax/convolution.h).

Runs JAX 0.10.2 on CPU (x64 off) on fixed inputs and writes tests/core/testdata/
conv_vectors.txt, read by tests/core/lax/convolution_test.cc, in the format of
tools/make_jnp_array_vectors.py (whose writer this reuses): <case>.in<k> inputs (float32,
seeded standard normal), <case>.out0 JAX's output, and for the cases marked with gradients
<case>.ct (a fixed cotangent) and <case>.grad<k> = d sum(out0 * ct) / d in<k>.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_conv_vectors.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_jnp_array_vectors as base  # noqa: E402  (sets JAX_PLATFORMS=cpu first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

OUT = os.path.join(base.ROOT, "tests", "core", "testdata", "conv_vectors.txt")
cgd = lax.conv_general_dilated
inf = float("inf")


def tied(x):
  """round(x) in value (ties likely), the identity in gradient: x - stop_gradient(x) is 0."""
  return jnp.round(x) + (x - lax.stop_gradient(x))


def rw(init, op, *args, **kw):
  return lambda x: lax.reduce_window(x, init, op, *args, **kw)


# name: (function, input shapes, record gradients)
CASES = {
    "c2d_nchw_pad": (lambda x, w: cgd(x, w, (1, 1), ((1, 1), (1, 1))),
                     [(2, 3, 5, 4), (4, 3, 3, 3)], True),
    "c2d_nhwc_same_s2": (lambda x, w: cgd(x, w, (2, 2), "SAME",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")),
                         [(2, 5, 6, 3), (3, 3, 3, 4)], True),
    "c2d_same_lower": (lambda x, w: cgd(x, w, (2, 1), "SAME_LOWER"),
                       [(1, 2, 5, 5), (2, 2, 2, 2)], True),
    "c2d_valid": (lambda x, w: cgd(x, w, (1, 1), "VALID"), [(1, 2, 5, 4), (3, 2, 2, 3)], True),
    "c1d_rhs_dil": (lambda x, w: cgd(x, w, (1,), ((2, 1),), rhs_dilation=(2,)),
                    [(2, 2, 9), (3, 2, 3)], True),
    "c1d_lhs_dil": (lambda x, w: cgd(x, w, (2,), ((1, 2),), lhs_dilation=(2,)),
                    [(1, 2, 5), (2, 2, 3)], True),
    "c3d": (lambda x, w: cgd(x, w, (1, 2, 1), ((0, 1), (1, 1), (0, 0))),
            [(1, 2, 4, 5, 3), (2, 2, 2, 3, 2)], True),
    "c2d_fgroups": (lambda x, w: cgd(x, w, (1, 1), "VALID", feature_group_count=2),
                    [(2, 4, 4, 4), (6, 2, 2, 2)], True),
    "c2d_bgroups": (lambda x, w: cgd(x, w, (1, 1), "VALID", batch_group_count=2),
                    [(4, 2, 4, 3), (4, 2, 2, 2)], True),
    "c2d_dn_numbers": (lambda x, w: cgd(
        x, w, (1, 1), ((0, 1), (1, 0)),
        dimension_numbers=lax.ConvDimensionNumbers((3, 1, 0, 2), (1, 3, 2, 0), (2, 0, 3, 1))),
                       [(3, 2, 4, 2), (2, 3, 2, 2)], True),
    "convolve_full": (lambda a, v: jnp.convolve(a, v), [(7,), (3,)], True),
    "convolve_same": (lambda a, v: jnp.convolve(a, v, mode="same"), [(7,), (4,)], True),
    "convolve_valid_swapped": (lambda a, v: jnp.convolve(a, v, mode="valid"), [(3,), (6,)],
                               True),
    "correlate_valid": (lambda a, v: jnp.correlate(a, v), [(7,), (3,)], True),
    "correlate_full": (lambda a, v: jnp.correlate(a, v, mode="full"), [(5,), (4,)], True),
    "correlate_same_swapped": (lambda a, v: jnp.correlate(a, v, mode="same"), [(3,), (6,)],
                               True),
    "rw_max_pool": (rw(-inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), [(2, 4, 4, 3)],
                    True),
    "rw_sum_same": (rw(0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"), [(2, 4, 5, 2)], True),
    "rw_max_dilated": (rw(-inf, lax.max, (2, 3), (1, 2), ((1, 0), (0, 1)),
                          base_dilation=(1, 2), window_dilation=(2, 1)), [(5, 6)], False),
    "rw_min_strided": (rw(inf, lax.min, (3, 2), (2, 1), "VALID"), [(7, 5)], True),
    "rw_sum_1d_pad": (rw(0.0, lax.add, (3,), (2,), ((2, 1),)), [(8,)], True),
    "rw_prod": (rw(1.0, lax.mul, (2, 2), (1, 1), "VALID"), [(3, 4)], False),
    # Ties: the inputs rounded (with the identity's gradient), so windows meet equal maxima and
    # JAX's select_and_scatter_add gives each window's cotangent to its first extreme element.
    "rw_max_ties_1d": (lambda x: rw(-inf, lax.max, (3,), (2,), ((1, 1),))(tied(x)), [(9,)], True),
    "rw_max_ties_2d": (lambda x: rw(-inf, lax.max, (2, 3), (1, 2), ((1, 0), (1, 1)))(tied(x)),
                       [(4, 7)], True),
    "rw_min_ties_2d": (lambda x: rw(inf, lax.min, (2, 2), (1, 1), "VALID")(tied(x)), [(3, 5)],
                       True),
    "max_pool_ties": (lambda x: rw(-inf, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "SAME")(tied(x)),
                      [(1, 4, 4, 2)], True),
}


def main():
  base.main_for(CASES, OUT,
                "# lax convolution / reduce_window results for graft's tests/core/lax/convolution_test.cc.",
                "make_conv_vectors")


if __name__ == "__main__":
  main()
