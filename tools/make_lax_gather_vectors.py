"""Writes tests/core/testdata/lax_gather_vectors.txt: lax.gather / lax.scatter* by JAX.

Run with the peers' venv (JAX / jaxlib 0.10.2, CPU, default flags: x64 off):

    ~/.cache/graft-peers/venv/bin/python tools/make_lax_gather_vectors.py \
        > tests/core/testdata/lax_gather_vectors.txt

One vector per line: "name dtype shape values..." (the format of the other jnp vector files;
floats as Python's repr of the float32 value). Case c stores its inputs as c.in0 (operand),
c.in1 (indices), c.in2 (updates, scatters only) and its output as c.out0; where JAX defines
the gradient, c.grad0 / c.grad2 are d sum(out0 * ct) / d in0 / in2 with
ct = 1 + 0.25 * arange(out0.size) (jnp_vectors::check_recorded_gradients' cotangent).
The dimension numbers are those of JAX's own tests/lax_test.py gather / scatter cases (take
rows, take columns, windows with offset dims, collapsed / inserted dims, batching dims) plus
out-of-bounds indices in each mode. tests/core/lax/gather_test.cc spells each case again in
C++ under the same name.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from make_lax_index_vectors import fmt  # the same line format

GD = lax.GatherDimensionNumbers
SD = lax.ScatterDimensionNumbers


def operand(shape, seed, dtype=np.float32):
    rng = np.random.RandomState(seed)
    if np.issubdtype(dtype, np.integer):
        low = 0 if np.issubdtype(dtype, np.unsignedinteger) else -9
        return rng.randint(low, 10, size=shape).astype(dtype)
    # Quarter steps: ties where a test wants them are set by hand.
    return (rng.randint(-12, 13, size=shape) * 0.25).astype(dtype)


def ct_of(out):
    return (1 + 0.25 * jnp.arange(out.size, dtype=out.dtype)).reshape(out.shape)


def record(out, name, fn, args, grad_args=()):
    for i, a in enumerate(args):
        out.write(fmt("%s.in%d" % (name, i), a))
    res = fn(*[jnp.asarray(a) for a in args])
    out.write(fmt(name + ".out0", res))
    for k in grad_args:
        def loss(xk, k=k):
            a = [jnp.asarray(v) for v in args]
            a[k] = xk
            r = fn(*a)
            return jnp.sum(r * ct_of(r))
        out.write(fmt("%s.grad%d" % (name, k), jax.grad(loss)(jnp.asarray(args[k]))))


GATHER_CASES = [
    # name, operand shape, indices, dnums, slice_sizes (from lax_test's testGather cases)
    ("scalars", (5,), [[0], [2]], GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (1,)),
    ("windows_1d", (10,), [[0], [0], [0]], GD(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,)), (2,)),
    ("take_rows", (10, 5), [[0], [2], [1]], GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 3)),
    ("two_starts", (10, 5), [[0, 2], [1, 0]], GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1)), (1, 3)),
    ("take_columns", (4, 6), [[1], [5], [3], [1]], GD(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,)), (4, 1)),
    ("offset_dims_apart", (3, 4, 5), [[[1, 0], [2, 3]], [[0, 1], [1, 1]]], GD(offset_dims=(0, 3), collapsed_slice_dims=(1,), start_index_map=(1, 2)), (2, 1, 2)),
    ("reversed_start_map", (6, 5), [[1, 4], [0, 2], [2, 3]], GD(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(1, 0)), (2, 3)),
    ("batching", (2, 5), [[[0], [2]], [[1], [1]]], GD(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1)),
    ("batching_two", (2, 3, 10), [[[0], [1]], [[2], [3]], [[4], [5]]], GD(offset_dims=(2,), collapsed_slice_dims=(), start_index_map=(2,), operand_batching_dims=(0, 1), start_indices_batching_dims=(1, 0)), (1, 1, 3)),
]

# Out-of-bounds starts (negative ones too: lax does not wrap) in each mode.
OOB_INDICES = [[-1], [9], [2], [8], [7]]
OOB_DNUMS = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))

SCATTER_CASES = [
    # name, operand shape, indices, updates shape, dnums (from lax_test's testScatter* cases)
    ("scalars", (5,), [[0], [2]], (2,), SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))),
    ("windows_1d", (10,), [[0], [4], [7]], (3, 2), SD(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))),
    ("rows", (10, 5), [[0], [2], [1]], (3, 3), SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))),
    ("columns", (4, 6), [[1], [5], [3]], (4, 3), SD(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))),
    ("two_starts", (6, 5), [[1, 4], [0, 2], [3, 1]], (3, 2), SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0, 1))),
    ("batching", (2, 5), [[[0], [2]], [[1], [3]]], (2, 2), SD(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))),
    ("batching_two", (2, 3, 10), [[[0], [1]], [[2], [3]], [[4], [5]]], (3, 2, 3), SD(update_window_dims=(2,), inserted_window_dims=(), scatter_dims_to_operand_dims=(2,), operand_batching_dims=(0, 1), scatter_indices_batching_dims=(1, 0))),
]

# Duplicate targets (rows 2 and 0 twice) and ties for min / max.
DUP_INDICES = [[2], [0], [2], [4], [0]]
DUP_DNUMS = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))

OPS = {
    "set": lax.scatter,
    "add": lax.scatter_add,
    "sub": lax.scatter_sub,
    "mul": lax.scatter_mul,
    "min": lax.scatter_min,
    "max": lax.scatter_max,
}


def main():
    out = sys.stdout
    out.write("# lax.gather / lax.scatter* by JAX %s (tools/make_lax_gather_vectors.py)\n"
              % jax.__version__)
    for i, (name, shape, idx, dn, sizes) in enumerate(GATHER_CASES):
        x = operand(shape, 10 + i)
        idx = np.array(idx, np.int32)
        record(out, "gather_" + name,
               lambda x, i, dn=dn, sizes=sizes: lax.gather(x, i, dn, sizes), [x, idx], (0,))
    x = operand((10, 5), 30)
    idx = np.array(OOB_INDICES, np.int32)
    for mode in ("clip", "fill", "promise_in_bounds"):
        record(out, "gather_oob_" + mode,
               lambda x, i, mode=mode: lax.gather(x, i, OOB_DNUMS, (1, 3), mode=mode),
               [x, idx], (0,) if mode != "promise_in_bounds" else ())
    record(out, "gather_oob_fill_value",
           lambda x, i: lax.gather(x, i, OOB_DNUMS, (1, 3), mode="fill", fill_value=-7.5),
           [x, idx], (0,))
    xi = operand((10, 5), 31, np.int32)
    record(out, "gather_oob_fill_int",
           lambda x, i: lax.gather(x, i, OOB_DNUMS, (1, 3), mode="fill"), [xi, idx])

    for i, (name, shape, idx, ushape, dn) in enumerate(SCATTER_CASES):
        x = operand(shape, 40 + i)
        u = operand(ushape, 60 + i)
        idx = np.array(idx, np.int32)
        for op, f in OPS.items():
            # Unique indices: JAX differentiates every op (scatter_mul with unique_indices).
            fn = lambda x, i, u, f=f, dn=dn: f(x, i, u, dn, unique_indices=True)
            record(out, "scatter_%s_%s" % (op, name), fn, [x, idx, u], (0, 2))

    # Duplicates: set keeps the last (XLA's CPU), the others combine; min / max ties.
    x = operand((5, 3), 80)
    u = operand((5, 3), 81)
    u[1, 0] = x[0, 0]          # an update equal to the operand element it meets
    u[3, 1] = u[1, 1] = 3.0    # two equal updates at row 0 beat x
    x[0, 1] = -3.0
    idx = np.array(DUP_INDICES, np.int32)
    for op, f in OPS.items():
        grads = (0, 2) if op != "mul" else ()  # JAX has no scatter_mul gradient with duplicates
        record(out, "scatter_%s_duplicates" % op,
               lambda x, i, u, f=f: f(x, i, u, DUP_DNUMS), [x, idx, u], grads)

    # Out-of-bounds windows: dropped (default), clamped (clip).
    x = operand((10, 5), 90)
    u = operand((5, 3), 91)
    idx = np.array(OOB_INDICES, np.int32)
    for op, f in OPS.items():
        for mode in ("drop", "clip"):
            record(out, "scatter_%s_oob_%s" % (op, mode),
                   lambda x, i, u, f=f, mode=mode: f(x, i, u, OOB_DNUMS_S, mode=mode),
                   [x, idx, u], oob_grads(op, mode))

    # The default fill of the narrow integer types (u64 is not here: x64 is off).
    for dt in (np.int8, np.int16, np.uint8, np.uint16, np.uint32):
        record(out, "gather_oob_fill_" + np.dtype(dt).name,
               lambda x, i: lax.gather(x, i, OOB_DNUMS, (1, 3), mode="fill"),
               [operand((10, 5), 32, dt), idx])

    # scatter_apply: func applied once per window landing on an element (twice on duplicates).
    x = operand((5, 3), 94)
    for mode in ("drop", "clip"):
        record(out, "scatter_apply_" + mode,
               lambda x, i, mode=mode: lax.scatter_apply(
                   x, i, lambda v: v * v + 1, DUP_DNUMS, update_shape=(5, 3), mode=mode),
               [x, np.array([[2], [0], [2], [9], [0]], np.int32)])
    record(out, "scatter_apply_scalars",
           lambda x, i: lax.scatter_apply(x, i, lambda v: 2 * v - 1, SCATTER_CASES[0][4],
                                          update_shape=(3,)),
           [operand((5,), 95), np.array([[0], [2], [2]], np.int32)])
    # scatter_sub on unsigned values wraps.
    record(out, "scatter_sub_uint8",
           lambda x, i, u: lax.scatter_sub(x, i, u, OOB_DNUMS_S),
           [operand((10, 5), 96, np.uint8), np.array(DUP_INDICES, np.int32),
            operand((5, 3), 97, np.uint8)])

    xi = operand((10, 5), 92, np.int32)
    ui = operand((5, 3), 93, np.int32)
    for op, f in OPS.items():
        record(out, "scatter_%s_int" % op,
               lambda x, i, u, f=f: f(x, i, u, OOB_DNUMS_S), [xi, np.array(DUP_INDICES, np.int32), ui])


def oob_grads(op, mode):
    """Which gradients JAX defines for an out-of-bounds case: not scatter_mul's (duplicates
    after clamping; no unique_indices), and in clip mode only scatter_add's: JAX's scatter
    (set) and min / max jvps count the updates with drop-mode scatters while the scatter
    clamps, which gives wrong (even infinite) gradients there."""
    if op == "mul" or (mode == "clip" and op not in ("add", "sub")):
        return ()
    return (0, 2)


OOB_DNUMS_S = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))

if __name__ == "__main__":
    main()
