#!/usr/bin/env python3
"""Record JAX's results for graft's jax.numpy array ops (core/numpy/lax_numpy.h).

Runs jax.numpy (JAX 0.10.2 on CPU, default flags: x64 off) on fixed inputs and writes
tests/core/testdata/jnp_array_vectors.txt, which tests/core/numpy/lax_numpy_test.cc and
tests/core/numpy/einsum_test.cc read.

Each case has a name; its lines are

    <case>.in<k>   <dtype> <shape|scalar> <values...>   inputs (float32 from a seeded
                                                         numpy Generator, standard normal)
    <case>.out<k>  ...                                   JAX's output(s)
    <case>.ct      ...                                   a fixed cotangent of out0's shape
    <case>.grad<k> ...                                   d sum(out0 * ct) / d in<k>, by jax.grad

(gradients only for einsum, tensordot, kron, diagonal and trace cases). Values are row-major,
floats written with 9 significant digits (exact for float32), ints in decimal, bool as 0/1.
The op and its static arguments for each case are in CASES below; the C++ tests repeat
them by name.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_jnp_array_vectors.py
"""

import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "core", "testdata", "jnp_array_vectors.txt")


def ein(spec):
  return lambda *xs: jnp.einsum(spec, *xs)


# name -> (function, input shapes, record gradients)
CASES = {
    # einsum
    "einsum_matmul": (ein("ij,jk->ik"), [(3, 4), (4, 5)], True),
    "einsum_batched": (ein("bij,bjk->bik"), [(2, 3, 4), (2, 4, 5)], True),
    "einsum_outer": (ein("i,j->ij"), [(3,), (4,)], True),
    "einsum_trace": (ein("ii"), [(4, 4)], True),
    "einsum_diag": (ein("ii->i"), [(4, 4)], True),
    "einsum_transpose": (ein("ij->ji"), [(3, 4)], True),
    "einsum_sum": (ein("ij->"), [(3, 4)], True),
    "einsum_chain": (ein("ij,jk,kl->il"), [(2, 3), (3, 4), (4, 5)], True),
    "einsum_ellipsis": (ein("...ij,...jk->...ik"), [(2, 3, 4), (2, 4, 5)], True),
    "einsum_ellipsis_bcast": (ein("...ij,...jk->...ik"), [(2, 1, 3, 4), (3, 4, 2)], True),
    "einsum_implicit": (ein("ij,jk"), [(3, 4), (4, 2)], True),
    "einsum_implicit_t": (ein("ba"), [(3, 4)], True),
    "einsum_bilinear": (ein("i,ij,j->"), [(3,), (3, 4), (4,)], True),
    "einsum_diag_pair": (ein("iij,jk->ik"), [(3, 3, 4), (4, 2)], True),
    "einsum_attention": (ein("bhqd,bhkd->bhqk"), [(2, 2, 3, 4), (2, 2, 5, 4)], True),
    "einsum_sum_unique": (ein("ijk,jl->il"), [(2, 3, 4), (3, 5)], True),
    "einsum_batch_out_perm": (ein("bij,bjk->kbi"), [(2, 3, 4), (2, 4, 5)], True),
    "einsum_upper_implicit": (ein("bA,Cb"), [(3, 4), (2, 3)], True),
    "einsum_ellipsis_implicit": (ein("...ij,...jk"), [(2, 3, 4), (4, 5)], True),
    "einsum_ellipsis_summed": (ein("...ij->ij"), [(2, 3, 4)], True),
    # contractions
    "tensordot_2": (lambda a, b: jnp.tensordot(a, b, 2), [(2, 3, 4), (3, 4, 5)], True),
    "tensordot_pairs": (lambda a, b: jnp.tensordot(a, b, [(0, 2), (1, 0)]),
                        [(3, 4, 5), (5, 3, 2)], True),
    "tensordot_0": (lambda a, b: jnp.tensordot(a, b, 0), [(2, 3), (4,)], True),
    "inner": (jnp.inner, [(2, 3), (4, 3)], False),
    "vdot": (jnp.vdot, [(2, 3), (3, 2)], False),
    "kron": (jnp.kron, [(2, 3), (2, 2)], True),
    "kron_1d_2d": (jnp.kron, [(3,), (2, 2)], True),
    # triangles and diagonals
    "tril_0": (lambda m: jnp.tril(m), [(3, 4)], False),
    "tril_1": (lambda m: jnp.tril(m, 1), [(3, 4)], False),
    "tril_batch_m1": (lambda m: jnp.tril(m, -1), [(2, 3, 3)], False),
    "triu_0": (lambda m: jnp.triu(m), [(3, 4)], False),
    "triu_m1": (lambda m: jnp.triu(m, -1), [(4, 3)], False),
    "triu_batch_2": (lambda m: jnp.triu(m, 2), [(2, 3, 4)], False),
    "tri_3_4_1": (lambda: jnp.tri(3, 4, 1), [], False),
    "tri_3": (lambda: jnp.tri(3), [], False),
    "diag_1d": (lambda v: jnp.diag(v), [(3,)], False),
    "diag_1d_k2": (lambda v: jnp.diag(v, 2), [(3,)], False),
    "diag_1d_km1": (lambda v: jnp.diag(v, -1), [(3,)], False),
    "diag_2d_k1": (lambda v: jnp.diag(v, 1), [(3, 4)], False),
    "diagonal_0": (lambda a: jnp.diagonal(a), [(3, 4)], True),
    "diagonal_1": (lambda a: jnp.diagonal(a, 1), [(3, 4)], True),
    "diagonal_m2": (lambda a: jnp.diagonal(a, -2), [(4, 3)], True),
    "diagonal_axes": (lambda a: jnp.diagonal(a, 0, 1, 2), [(2, 3, 4)], True),
    "diagonal_axes_rev": (lambda a: jnp.diagonal(a, -1, 2, 0), [(3, 2, 4)], True),
    "diagonal_empty": (lambda a: jnp.diagonal(a, 5), [(3, 4)], False),
    "trace_0": (lambda a: jnp.trace(a), [(3, 4)], True),
    "trace_1": (lambda a: jnp.trace(a, 1), [(3, 4)], True),
    "trace_axes": (lambda a: jnp.trace(a, 0, 2, 0), [(3, 2, 4)], True),
    # rearranging
    "roll_flat": (lambda a: jnp.roll(a, 2), [(3, 4)], False),
    "roll_axis": (lambda a: jnp.roll(a, -1, 1), [(3, 4)], False),
    "roll_multi": (lambda a: jnp.roll(a, (1, 5), (0, 1)), [(3, 4)], False),
    "fliplr": (jnp.fliplr, [(2, 3, 2)], False),
    "flipud": (jnp.flipud, [(3, 2)], False),
    "rot90_1": (lambda m: jnp.rot90(m), [(2, 3, 4)], False),
    "rot90_2": (lambda m: jnp.rot90(m, 2), [(2, 3, 4)], False),
    "rot90_3_axes": (lambda m: jnp.rot90(m, 3, (1, 2)), [(2, 3, 4)], False),
    "rot90_m1_axes": (lambda m: jnp.rot90(m, -1, (2, 0)), [(2, 3, 4)], False),
    # stacking
    "atleast_1d_s": (jnp.atleast_1d, [()], False),
    "atleast_2d_s": (jnp.atleast_2d, [()], False),
    "atleast_2d_v": (jnp.atleast_2d, [(3,)], False),
    "atleast_3d_s": (jnp.atleast_3d, [()], False),
    "atleast_3d_v": (jnp.atleast_3d, [(3,)], False),
    "atleast_3d_m": (jnp.atleast_3d, [(2, 3)], False),
    "hstack_1d": (lambda a, b: jnp.hstack([a, b]), [(2,), (3,)], False),
    "hstack_2d": (lambda a, b: jnp.hstack([a, b]), [(2, 3), (2, 1)], False),
    "vstack_1d": (lambda a, b: jnp.vstack([a, b]), [(3,), (3,)], False),
    "vstack_2d": (lambda a, b: jnp.vstack([a, b]), [(1, 3), (2, 3)], False),
    "dstack": (lambda a, b: jnp.dstack([a, b]), [(2, 3), (2, 3)], False),
    "column_stack": (lambda a, b: jnp.column_stack([a, b]), [(3,), (3, 2)], False),
    "meshgrid_xy": (lambda a, b, c: jnp.meshgrid(a, b, c), [(3,), (4,), (2,)], False),
    "meshgrid_ij": (lambda a, b, c: jnp.meshgrid(a, b, c, indexing="ij"),
                    [(3,), (4,), (2,)], False),
    # differences and statistics
    "diff_1": (lambda a: jnp.diff(a), [(3, 5)], False),
    "diff_2_axis0": (lambda a: jnp.diff(a, 2, 0), [(4, 3)], False),
    "ediff1d": (lambda a, e, b: jnp.ediff1d(a, to_end=e, to_begin=b), [(2, 3), (2,), (1,)],
                False),
    "ptp_all": (lambda a: jnp.ptp(a), [(3, 4)], False),
    "ptp_axis1": (lambda a: jnp.ptp(a, axis=1, keepdims=True), [(3, 4)], False),
    "average_plain": (lambda a: jnp.average(a, axis=0), [(3, 4)], False),
    "average_w_same": (lambda a, w: jnp.average(a, weights=jnp.abs(w)), [(3, 4), (3, 4)],
                       False),
    "average_w_axis": (lambda a, w: jnp.average(a, axis=1, weights=jnp.abs(w)),
                       [(3, 4), (4,)], False),
    "average_w_axes": (lambda a, w: jnp.average(a, axis=(2, 0), weights=jnp.abs(w)),
                       [(2, 3, 4), (4, 2)], False),
    "cross_3": (jnp.cross, [(4, 3), (4, 3)], False),
    "cross_3_2": (jnp.cross, [(3,), (2,)], False),
    "cross_2": (jnp.cross, [(2,), (2,)], False),
    "cross_axes": (lambda a, b: jnp.cross(a, b, axisa=0, axisb=0, axisc=0), [(3, 2), (3, 2)],
                   False),
}


def fmt(name, x):
  x = np.asarray(x)
  dt = {np.dtype(np.float32): "float32", np.dtype(np.int32): "int32",
        np.dtype(np.bool_): "bool"}[x.dtype]
  shape = ",".join(str(d) for d in x.shape) if x.ndim else "scalar"
  if dt == "float32":
    vals = " ".join(f"{float(v):.9g}" for v in x.ravel())
  else:
    vals = " ".join(str(int(v)) for v in x.ravel())
  return f"{name} {dt} {shape} {vals}".rstrip()


def main():
  lines = [
      "# jax.numpy results for graft's tests/core/numpy/lax_numpy_test.cc and einsum_test.cc.",
      f"# Written by tools/make_jnp_array_vectors.py with JAX {jax.__version__} on "
      f"{jax.default_backend()} (x64 off).",
  ]
  for idx, (name, (fn, shapes, grads)) in enumerate(CASES.items()):
    rng = np.random.default_rng(1000 + idx)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for k, x in enumerate(xs):
      lines.append(fmt(f"{name}.in{k}", x))
    out = fn(*[jnp.asarray(x) for x in xs])
    outs = out if isinstance(out, (list, tuple)) else [out]
    for k, o in enumerate(outs):
      lines.append(fmt(f"{name}.out{k}", o))
    if grads:
      ct = rng.standard_normal(np.shape(outs[0])).astype(np.float32)
      lines.append(fmt(f"{name}.ct", ct))
      g = jax.grad(lambda *a: jnp.sum(fn(*a) * ct), argnums=tuple(range(len(xs))))(
          *[jnp.asarray(x) for x in xs])
      for k, gk in enumerate(g):
        lines.append(fmt(f"{name}.grad{k}", gk))
  os.makedirs(os.path.dirname(OUT), exist_ok=True)
  with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
  print(f"wrote {len(CASES)} cases to {OUT}")


def main_for(cases, out, title, script):
  """Writes `cases` to `out` like main(), with the header naming `title` and `script` (the
  scripts that reuse this writer)."""
  global OUT
  CASES.clear()
  CASES.update(cases)
  OUT = out
  main()
  with open(out) as f:
    lines = f.read().split("\n")
  lines[0] = title if title.startswith("#") else "# " + title
  lines[1] = lines[1].replace("make_jnp_array_vectors", script)
  with open(out, "w") as f:
    f.write("\n".join(lines))


if __name__ == "__main__":
  main()
