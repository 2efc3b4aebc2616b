"""Writes tests/core/testdata/lax_index_vectors.txt: lax scans, cumulative ops and top_k by JAX.

Run with the peers' venv (JAX / jaxlib 0.10.2, CPU, default flags: x64 off):

    ~/.cache/graft-peers/venv/bin/python tools/make_lax_index_vectors.py \
        > tests/core/testdata/lax_index_vectors.txt

One vector per line: "name dtype shape values..." (shape "1,2,3" or "scalar"; floats as
Python's repr of the float32 value: exact, and 'nan' / 'inf' / '-inf'). A case `c` stores its
inputs as c.in0, c.in1, ... and its outputs as c.out0, c.out1, ...; gradient cases store
d sum(w * f(x)) / dx with w = the case's .in1 (fixed weights). tests/core/lax/scan_test.cc
reads the file and compares graft's results.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

nan, inf = np.nan, np.inf

# Inputs with ties, signed zeros and small integers, so cummax / cummin / top_k see ties.
X46 = np.array([[0.5, -1.0, 2.0, 2.0, -3.0, 0.25],
                [1.5, 1.5, -0.5, 4.0, 0.0, -2.0],
                [-1.0, 3.0, 3.0, -2.5, 1.0, 1.0],
                [2.0, -0.75, 0.5, 0.5, -1.25, 3.5]], np.float32)
W46 = np.array(np.linspace(-1.0, 1.3, 24).reshape(4, 6), np.float32)
X7 = np.array([0.5, 1.25, -2.0, 1.5, 0.75, -0.5, 2.0], np.float32)
W7 = np.array([1.0, -0.5, 0.25, 2.0, -1.5, 0.75, 1.25], np.float32)
XNAN = np.array([[1.0, nan, 2.0, -1.5], [nan, 0.5, nan, 3.0]], np.float32)
TOPK = np.array([[1.0, 3.0, -0.0, 3.0, 0.0, nan, -inf, 2.0],
                 [0.5, 0.5, 0.5, -1.0, inf, 0.5, -2.0, 0.5]], np.float32)


def fmt(name, arr):
    arr = np.asarray(arr)
    shape = ",".join(str(d) for d in arr.shape) if arr.ndim else "scalar"
    if arr.dtype == np.bool_:
        vals = ["1" if v else "0" for v in arr.ravel()]
    elif np.issubdtype(arr.dtype, np.integer):
        vals = [str(int(v)) for v in arr.ravel()]
    else:
        vals = [repr(float(v)) for v in arr.ravel().astype(np.float32)]
    return "%s %s %s %s\n" % (name, arr.dtype, shape, " ".join(vals))


def case(out, name, fn, *args):
    for i, a in enumerate(args):
        out.write(fmt("%s.in%d" % (name, i), a))
    res = fn(*[jnp.asarray(a) for a in args])
    if not isinstance(res, (tuple, list)):
        res = (res,)
    for i, r in enumerate(res):
        out.write(fmt("%s.out%d" % (name, i), r))


def grad_case(out, name, fn, x, w):
    """d sum(w * fn(x)) / dx."""
    case(out, name, lambda x, w: jax.grad(lambda x: jnp.sum(w * fn(x)))(x), x, w)


def linear_recurrence(a, b):
    # (a1, b1) then (a2, b2): x -> a2 (a1 x + b1) + b2, a pytree combine.
    return (a[0] * b[0], a[1] * b[0] + b[1])


def main(out):
    assert jax.__version__ == "0.10.2", jax.__version__
    out.write("# lax scans, cumulative reductions and top_k for tests/core/lax/scan_test.cc.\n")
    out.write("# Written by tools/make_lax_index_vectors.py with JAX %s on %s (x64 off).\n"
              % (jax.__version__, jax.default_backend()))
    # associative_scan: a plain add, reversed along axis 1, and a pytree (tuple) combine.
    case(out, "assoc_add", lambda x: lax.associative_scan(jnp.add, x), X7)
    case(out, "assoc_add_rev_axis1",
         lambda x: lax.associative_scan(jnp.add, x, reverse=True, axis=1), X46)
    case(out, "assoc_pytree",
         lambda a, b: lax.associative_scan(linear_recurrence, (a, b)), X7, W7)
    grad_case(out, "assoc_pytree_grad",
              lambda a: lax.associative_scan(linear_recurrence, (a, a * 0.5))[1], X7, W7)
    # lax cumulative reductions and their gradients, both axes, both directions.
    cums = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax,
            "cummin": lax.cummin, "cumlogsumexp": lax.cumlogsumexp}
    for name, f in cums.items():
        for axis in (0, 1):
            for rev in (False, True):
                tag = "%s_axis%d%s" % (name, axis, "_rev" if rev else "")
                fn = lambda x, f=f, axis=axis, rev=rev: f(x, axis=axis, reverse=rev)
                case(out, tag, fn, X46)
                grad_case(out, tag + "_grad", fn, X46, W46)
    # jnp names: flattening, dtypes, NaNs, include_initial.
    case(out, "jnp_cumprod_flat", jnp.cumprod, X46 * 0.5)
    grad_case(out, "jnp_cumprod_flat_grad", lambda x: jnp.cumprod(x).reshape(4, 6),
              X46 * 0.5, W46)
    case(out, "jnp_cumprod_bool", jnp.cumprod, np.array([True, True, False, True]))
    case(out, "jnp_cumprod_i32", lambda x: jnp.cumprod(x, axis=1),
         np.array([[1, -2, 3], [4, 5, -1]], np.int32))
    case(out, "jnp_nancumsum", lambda x: jnp.nancumsum(x, axis=1), XNAN)
    case(out, "jnp_nancumsum_flat", jnp.nancumsum, XNAN)
    case(out, "jnp_nancumprod", lambda x: jnp.nancumprod(x, axis=0), XNAN)
    grad_case(out, "jnp_nancumprod_grad", lambda x: jnp.nancumprod(x, axis=1), XNAN,
              np.ones((2, 4), np.float32))
    case(out, "jnp_cumulative_sum", lambda x: jnp.cumulative_sum(x, axis=1), X46)
    case(out, "jnp_cumulative_sum_init",
         lambda x: jnp.cumulative_sum(x, axis=0, include_initial=True), X46)
    case(out, "jnp_cumulative_sum_u8", jnp.cumulative_sum, np.array([200, 100, 7], np.uint8))
    case(out, "jnp_cumulative_sum_bool", jnp.cumulative_sum, np.array([True, False, True]))
    case(out, "jnp_cumulative_prod_init",
         lambda x: jnp.cumulative_prod(x, axis=1, include_initial=True), X46)
    case(out, "jnp_cumulative_prod_1d", jnp.cumulative_prod, X7)
    # top_k: ties (lower index first), signed zeros, NaN and infinities, ints; and its grad.
    for k in (0, 3, 8):
        case(out, "top_k_%d" % k, lambda x, k=k: lax.top_k(x, k), TOPK)
    case(out, "top_k_i32", lambda x: lax.top_k(x, 4),
         np.array([[3, 1, 3, -5, 7, 1], [0, 0, 0, 0, 0, 0]], np.int32))
    case(out, "top_k_3d", lambda x: lax.top_k(x, 2), X46.reshape(2, 2, 6))
    grad_case(out, "top_k_grad", lambda x: lax.top_k(x, 3)[0], X46,
              np.array(W46[:, :3]))

    at_cases(out)


# x.at[...] cases: (name, index builder, op, values). Indices are written as the test spells
# them (tests/core/lax/scan_test.cc builds the same subscripts).
X345 = np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 0.5 - 7.0
IDX_A = np.array([2, 0, -1, 2], np.int32)      # duplicates and a negative index
IDX_OOB = np.array([1, 5, -7, 0], np.int32)     # out of range both ways (axis of 4)
IDX_B = np.array([[0], [2]], np.int32)          # broadcasts against IDX_C
IDX_C = np.array([1, 3, 4], np.int32)


def at_cases(out):
    s = slice
    subs = {
        "int": lambda i: (1,),
        "neg_int_slice": lambda i: (-1, s(None, None, 2)),
        "slice_neg_step": lambda i: (s(None, None, -1), s(3, 0, -2)),
        "array": lambda i: (i[0],),
        "array_axis1": lambda i: (s(None), i[0]),
        "arrays_adjacent": lambda i: (s(None), i[1], i[2]),
        "arrays_apart": lambda i: (i[1], s(None), i[2]),
        "int_and_array_apart": lambda i: (1, s(None), i[2]),
        "newaxis_ellipsis": lambda i: (None, Ellipsis, 2),
        "oob": lambda i: (s(None), i[3]),
    }
    idx = (IDX_A, IDX_B, IDX_C, IDX_OOB)
    rng = np.random.RandomState(0)
    out.write(fmt("at.x", X345))
    for k, a in enumerate(idx):
        out.write(fmt("at.idx%d" % k, a))
    for name, sub in subs.items():
        ix = sub(tuple(jnp.asarray(a) for a in idx))
        x = jnp.asarray(X345)
        shape = x[ix].shape
        v = np.asarray(rng.randint(-6, 7, size=shape), np.float32) * 0.75
        out.write(fmt("at_%s.v" % name, v))
        out.write(fmt("at_%s.get" % name, x.at[ix].get()))
        out.write(fmt("at_%s.get_clip" % name, x.at[ix].get(mode="clip")))
        out.write(fmt("at_%s.get_fill" % name, x.at[ix].get(mode="fill")))
        for op in ("set", "add", "mul", "min", "max", "divide", "power"):
            f = getattr(x.at[ix], op)
            vv = jnp.abs(jnp.asarray(v)) + 1 if op in ("divide", "power") else jnp.asarray(v)
            out.write(fmt("at_%s.%s" % (name, op), f(vv)))
        # Gradients of sum(w * x.at[ix].<op>(v)) in x and in v (w: a fixed ramp).
        w = jnp.asarray(np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 4, 5))
        for op in ("set", "add", "mul", "min", "max"):
            kw = {}
            if op == "mul":
                # JAX differentiates scatter_mul only with unique_indices=True.
                if name in ("array", "array_axis1", "oob"):
                    continue
                kw = {"unique_indices": True}
            gx, gv = jax.grad(lambda x, v: jnp.sum(w * getattr(x.at[ix], op)(v, **kw)),
                              argnums=(0, 1))(x, jnp.asarray(v))
            out.write(fmt("at_%s.grad_x_%s" % (name, op), gx))
            out.write(fmt("at_%s.grad_v_%s" % (name, op), gv))
    # jnp.put / put_along_axis / place.
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out.write(fmt("put.a", a))
    ind = np.array([1, 13, -2, 5, 1], np.int32)
    v = np.array([10.0, 20.0, 30.0], np.float32)
    out.write(fmt("put.ind", ind))
    out.write(fmt("put.v", v))
    out.write(fmt("put.drop", jnp.put(a, ind, v, inplace=False)))
    out.write(fmt("put.clip", jnp.put(a, ind, v, mode="clip", inplace=False)))
    out.write(fmt("put.wrap", jnp.put(a, ind, v, mode="wrap", inplace=False)))
    pi = np.array([[1], [3], [0]], np.int32)
    out.write(fmt("put_along_axis.ind", pi))
    out.write(fmt("put_along_axis.axis1",
                  jnp.put_along_axis(a, pi, np.float32(-5), axis=1, inplace=False)))
    pi0 = np.array([[2, 0, 1, 1]], np.int32)
    pv0 = np.array([[-1.0, -2.0, -3.0, -4.0]], np.float32)
    out.write(fmt("put_along_axis.ind0", pi0))
    out.write(fmt("put_along_axis.v0", pv0))
    out.write(fmt("put_along_axis.axis0",
                  jnp.put_along_axis(a, pi0, pv0, axis=0, inplace=False)))
    mask = (a.astype(np.int32) % 3) == 1
    out.write(fmt("place.mask", mask))
    out.write(fmt("place.out", jnp.place(a, mask, np.array([7.0, 8.0], np.float32),
                                         inplace=False)))


if __name__ == "__main__":
    main(sys.stdout)
