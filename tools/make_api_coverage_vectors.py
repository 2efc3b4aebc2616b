#!/usr/bin/env python3
"""Record JAX's results for the calls of graft's API coverage test (tests/api/*_entries.cc).

Runs JAX 0.10.2, Optax 0.2.8 and jax.nn on CPU (default flags: x64 off) and writes
tests/api/testdata/api_coverage_vectors.txt, which tests/api/api_coverage_test.cc reads: each
entry of the coverage test is a call of graft's version of a JAX name on fixed inputs; CALLS
below makes the same call with JAX on the same inputs, and its result is recorded under the
entry's key "<module>:<name>". The coverage test compares the C++ result with it (dtype and
shape exactly, values within the entry's tolerance) and counts the name as checked.

One line per result, "<key> <dtype> <shape|scalar> <values...>", values row-major: floats
with 9 significant digits (exact for float32; bfloat16 / float16 values are exact too), ints
in decimal, bool as 0 / 1, complex as the real and imaginary parts of each element in turn.

The inputs (as the C++ test's api_entry.h): v = arange(1, 7) * 0.25 (f32[6]),
m = arange(1, 7).reshape(2, 3) (f32[2, 3]), sq = a fixed symmetric positive-definite f32[3, 3]
with distinct eigenvalues, key = jax.random.PRNGKey(0) (graft's random::key(0)).

A name whose value the C++ side does not compare (its result is not fixed by the API) has no
entry here.

Usage: python3 tools/make_api_coverage_vectors.py
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "api", "testdata", "api_coverage_vectors.txt")

la = jnp.linalg
fft = jnp.fft
nn = jax.nn


def v():
  return jnp.arange(1.0, 7.0, 1.0) * 0.25


def m():
  return jnp.reshape(jnp.arange(1.0, 7.0, 1.0), (2, 3))


def sq():
  return jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], jnp.float32)


def key():
  return jax.random.PRNGKey(0)


def i32(*xs):
  return jnp.array(xs, jnp.int32)


def f32(*xs):
  return jnp.array(xs, jnp.float32)


def flag(b):
  return jnp.array(bool(b))


def step_of(opt):
  """One update of an optimizer on a one-leaf tree, as the C++ step_of."""
  p = [v()]
  s = opt.init(p)
  u, _ = opt.update([v() * 0.1], s, p)
  return u[0]


def save_then_load(name):
  path = os.path.join("/tmp", name)
  jnp.save(path, m())
  return jnp.load(path)


def sign_fixed_columns(x):
  """x's columns scaled by the sign of their largest-magnitude entry (as the C++
  sign_fixed_columns): eigenvectors and singular vectors are unique only up to sign."""
  idx = jnp.argmax(jnp.abs(x), axis=-2, keepdims=True)
  return x * jnp.sign(jnp.take_along_axis(x, idx, axis=-2))


CALLS = {
    # jax.numpy: inverse and hyperbolic trigonometry.
    "jnp:acos": lambda: jnp.acos(v() * 0.1),
    "jnp:acosh": lambda: jnp.acosh(v() + 1.0),
    "jnp:asin": lambda: jnp.asin(v() * 0.1),
    "jnp:asinh": lambda: jnp.asinh(v()),
    "jnp:atan": lambda: jnp.atan(v()),
    "jnp:atanh": lambda: jnp.atanh(v() * 0.1),
    "jnp:cosh": lambda: jnp.cosh(v()),
    "jnp:sinh": lambda: jnp.sinh(v()),
    "jnp:tan": lambda: jnp.tan(v()),
    "jnp:arccos": lambda: jnp.arccos(v() * 0.1),
    "jnp:arcsin": lambda: jnp.arcsin(v() * 0.1),
    "jnp:arctan": lambda: jnp.arctan(v()),
    "jnp:arccosh": lambda: jnp.arccosh(v() + 1.0),
    "jnp:arcsinh": lambda: jnp.arcsinh(v()),
    "jnp:arctanh": lambda: jnp.arctanh(v() * 0.1),
    # jax.numpy: elementwise math.
    "jnp:log2": lambda: jnp.log2(v() - 0.5),
    "jnp:log10": lambda: jnp.log10(v() - 0.5),
    "jnp:exp2": lambda: jnp.exp2(v() - 0.5),
    "jnp:cbrt": lambda: jnp.cbrt(v() - 0.5),
    "jnp:deg2rad": lambda: jnp.deg2rad(v() - 0.5),
    "jnp:radians": lambda: jnp.radians(v() - 0.5),
    "jnp:rad2deg": lambda: jnp.rad2deg(v() - 0.5),
    "jnp:degrees": lambda: jnp.degrees(v() - 0.5),
    "jnp:sinc": lambda: jnp.sinc(v() - 0.5),
    "jnp:signbit": lambda: jnp.signbit(v() - 0.5),
    "jnp:trunc": lambda: jnp.trunc(v() - 0.5),
    # jnp.fix is gone from JAX 0.10 (deprecated in 0.9 for jnp.trunc, which it equalled).
    "jnp:fix": lambda: jnp.trunc(v() - 0.5),
    "jnp:rint": lambda: jnp.rint(v() - 0.5),
    "jnp:positive": lambda: jnp.positive(v() - 0.5),
    "jnp:fabs": lambda: jnp.fabs(v() - 0.5),
    "jnp:isposinf": lambda: jnp.isposinf(v() - 0.5),
    "jnp:isneginf": lambda: jnp.isneginf(v() - 0.5),
    "jnp:nan_to_num": lambda: jnp.nan_to_num(v() - 0.5),
    "jnp:logaddexp": lambda: jnp.logaddexp(v() - 0.5, v() * 0.5),
    "jnp:logaddexp2": lambda: jnp.logaddexp2(v() - 0.5, v() * 0.5),
    "jnp:hypot": lambda: jnp.hypot(v() - 0.5, v() * 0.5),
    "jnp:arctan2": lambda: jnp.arctan2(v() - 0.5, v() * 0.5),
    "jnp:atan2": lambda: jnp.atan2(v() - 0.5, v() * 0.5),
    "jnp:copysign": lambda: jnp.copysign(v() - 0.5, v() * 0.5),
    "jnp:fmax": lambda: jnp.fmax(v() - 0.5, v() * 0.5),
    "jnp:fmin": lambda: jnp.fmin(v() - 0.5, v() * 0.5),
    "jnp:heaviside": lambda: jnp.heaviside(v() - 0.5, v() * 0.5),
    "jnp:float_power": lambda: jnp.float_power(v() - 0.5, v() * 0.5),
    "jnp:isclose": lambda: jnp.isclose(v() - 0.5, v() * 0.5),
    "jnp:fmod": lambda: jnp.fmod(v() - 0.5, v() * 0.5),
    "jnp:allclose": lambda: jnp.allclose(v(), v() + 1e-9),
    "jnp:divmod": lambda: jnp.divmod(v(), v() * 0.3)[0],
    # jax.numpy: array functions and einsum.
    "jnp:einsum": lambda: jnp.einsum("ij,jk->ik", m(), m().T),
    "jnp:einsum_path": lambda: jnp.array(
        jnp.einsum_path("ij,jk,kl->il", m(), m().T, m())[0], jnp.int32),
    "jnp:tensordot": lambda: jnp.tensordot(m(), m(), 2),
    "jnp:inner": lambda: jnp.inner(v(), v()),
    "jnp:vdot": lambda: jnp.vdot(v(), v()),
    "jnp:kron": lambda: jnp.kron(m(), m()),
    "jnp:tri": lambda: jnp.tri(3),
    "jnp:tril": lambda: jnp.tril(m()),
    "jnp:triu": lambda: jnp.triu(m()),
    "jnp:diag": lambda: jnp.diag(v()),
    "jnp:diagonal": lambda: jnp.diagonal(m()),
    "jnp:trace": lambda: jnp.trace(m()),
    "jnp:roll": lambda: jnp.roll(v(), 2),
    "jnp:fliplr": lambda: jnp.fliplr(m()),
    "jnp:flipud": lambda: jnp.flipud(m()),
    "jnp:rot90": lambda: jnp.rot90(m()),
    "jnp:atleast_1d": lambda: jnp.atleast_1d(v()),
    "jnp:atleast_2d": lambda: jnp.atleast_2d(v()),
    "jnp:atleast_3d": lambda: jnp.atleast_3d(v()),
    "jnp:hstack": lambda: jnp.hstack([v(), v()]),
    "jnp:vstack": lambda: jnp.vstack([v(), v()]),
    "jnp:dstack": lambda: jnp.dstack([v(), v()]),
    "jnp:column_stack": lambda: jnp.column_stack([v(), v()]),
    "jnp:meshgrid": lambda: jnp.meshgrid(v(), v() * 2.0)[1],
    "jnp:diff": lambda: jnp.diff(v() * v()),
    "jnp:ediff1d": lambda: jnp.ediff1d(v() * v()),
    "jnp:ptp": lambda: jnp.ptp(v()),
    "jnp:average": lambda: jnp.average(m(), axis=1, weights=f32(1, 2, 3)),
    "jnp:cross": lambda: jnp.cross(jnp.reshape(v(), (2, 3)), m()),
    # jax.numpy cumulative reductions.
    "jnp:cumprod": lambda: jnp.cumprod(v()),
    "jnp:cumulative_prod": lambda: jnp.cumulative_prod(v(), include_initial=True),
    "jnp:nancumprod": lambda: jnp.nancumprod(m(), 1),
    "jnp:nancumsum": lambda: jnp.nancumsum(m(), 0),
    # jax.numpy: indexed updates.
    "jnp:put": lambda: jnp.put(v(), i32(0, 2), f32(1, 2), inplace=False),
    "jnp:put_along_axis": lambda: jnp.put_along_axis(
        m(), jnp.array([[0], [1]], jnp.int32), 0.0, axis=1, inplace=False),
    "jnp:place": lambda: jnp.place(v(), v() > 0.5, f32(9), inplace=False),
    # jnp.linalg without factorizations, and jnp's matrix-vector helpers.
    "jnp.linalg:linalg.vector_norm": lambda: la.vector_norm(v()),
    "jnp.linalg:linalg.matrix_norm": lambda: la.matrix_norm(m()),
    "jnp.linalg:linalg.norm": lambda: la.norm(m(), ord=2),
    "jnp.linalg:linalg.matrix_power": lambda: la.matrix_power(sq() * 0.5, -2),
    "jnp.linalg:linalg.multi_dot": lambda: la.multi_dot([m(), m().T, m()]),
    "jnp.linalg:linalg.vecdot": lambda: la.vecdot(m(), m()),
    "jnp.linalg:linalg.diagonal": lambda: la.diagonal(m()),
    "jnp.linalg:linalg.trace": lambda: la.trace(m()),
    "jnp.linalg:linalg.tensordot": lambda: la.tensordot(m(), m(), axes=2),
    "jnp.linalg:linalg.cross": lambda: la.cross(m(), m() * m()),
    # jnp.linalg's factorizations and what is built on them.
    "jnp.linalg:linalg.cholesky": lambda: la.cholesky(sq()),
    "jnp.linalg:linalg.qr": lambda: la.qr(m()).R,
    "jnp.linalg:linalg.svd": lambda: sign_fixed_columns(la.svd(m()).U),
    "jnp.linalg:linalg.svdvals": lambda: la.svdvals(m()),
    "jnp.linalg:linalg.eigh": lambda: sign_fixed_columns(la.eigh(sq()).eigenvectors),
    "jnp.linalg:linalg.eigvalsh": lambda: la.eigvalsh(sq()),
    "jnp.linalg:linalg.solve": lambda: la.solve(sq(), f32(1, 2, 3)),
    "jnp.linalg:linalg.inv": lambda: la.inv(sq()),
    "jnp.linalg:linalg.det": lambda: la.det(sq()),
    "jnp.linalg:linalg.slogdet": lambda: la.slogdet(sq()).logabsdet,
    "jnp.linalg:linalg.lstsq": lambda: la.lstsq(m().T, f32(1, 2, 4))[0],
    "jnp.linalg:linalg.pinv": lambda: la.pinv(m()),
    "jnp.linalg:linalg.cond": lambda: la.cond(sq()),
    "jnp.linalg:linalg.matrix_rank": lambda: la.matrix_rank(m()),
    "jnp.linalg:linalg.tensorinv": lambda: la.tensorinv(
        jnp.reshape(jnp.eye(6) * 2.0 + 0.1, (2, 3, 6)), 2),
    "jnp.linalg:linalg.tensorsolve": lambda: la.tensorsolve(
        jnp.reshape(jnp.eye(6) * 2.0 + 0.1, (2, 3, 6)), m()),
    "jnp:matrix_transpose": lambda: jnp.matrix_transpose(m()),
    "jnp:vecdot": lambda: jnp.vecdot(m(), m()),
    "jnp:matvec": lambda: jnp.matvec(m(), f32(1, 2, 3)),
    "jnp:vecmat": lambda: jnp.vecmat(f32(1, 2), m()),
    # jax.numpy: convolution.
    "jnp:convolve": lambda: jnp.convolve(v(), f32(1, 2)),
    "jnp:correlate": lambda: jnp.correlate(v(), f32(1, 2), "same"),
    # jax.numpy statistics, searching, construction, shapes, polynomials.
    "jnp:std": lambda: jnp.std(m(), axis=1),
    "jnp:nansum": lambda: jnp.nansum(v()),
    "jnp:nanprod": lambda: jnp.nanprod(v()),
    "jnp:nanmax": lambda: jnp.nanmax(v()),
    "jnp:nanmin": lambda: jnp.nanmin(v()),
    "jnp:nanmean": lambda: jnp.nanmean(v()),
    "jnp:nanvar": lambda: jnp.nanvar(v()),
    "jnp:nanstd": lambda: jnp.nanstd(v()),
    "jnp:nanargmax": lambda: jnp.nanargmax(v()),
    "jnp:nanargmin": lambda: jnp.nanargmin(v()),
    "jnp:count_nonzero": lambda: jnp.count_nonzero(m() - 2.0),
    "jnp:quantile": lambda: jnp.quantile(v(), 0.3),
    "jnp:nanquantile": lambda: jnp.nanquantile(v(), 0.3),
    "jnp:percentile": lambda: jnp.percentile(v(), 30.0),
    "jnp:nanpercentile": lambda: jnp.nanpercentile(v(), 30.0),
    "jnp:median": lambda: jnp.median(m(), 1),
    "jnp:nanmedian": lambda: jnp.nanmedian(m(), 1),
    "jnp:cov": lambda: jnp.cov(m()),
    "jnp:corrcoef": lambda: jnp.corrcoef(m() * m()),
    "jnp:searchsorted": lambda: jnp.searchsorted(v(), v() * 0.5),
    "jnp:digitize": lambda: jnp.digitize(v() * 0.5, v()),
    "jnp:bincount": lambda: jnp.bincount(i32(0, 1, 1, 3, 4), length=6),
    "jnp:isin": lambda: jnp.isin(v(), v() * 2.0),
    "jnp:nonzero": lambda: jnp.nonzero(m() - 2.0, size=6)[0],
    "jnp:flatnonzero": lambda: jnp.flatnonzero(m() - 2.0, size=6),
    "jnp:argwhere": lambda: jnp.argwhere(m() - 2.0, size=6),
    "jnp:lexsort": lambda: jnp.lexsort((v(), jnp.floor(v()))),
    "jnp:histogram_bin_edges": lambda: jnp.histogram_bin_edges(v(), 3),
    "jnp:histogram": lambda: jnp.histogram(v(), 3)[0],
    "jnp:tril_indices": lambda: jnp.tril_indices(3)[0],
    "jnp:triu_indices": lambda: jnp.triu_indices(3)[1],
    "jnp:tril_indices_from": lambda: jnp.tril_indices_from(m())[1],
    "jnp:triu_indices_from": lambda: jnp.triu_indices_from(m())[1],
    "jnp:diag_indices": lambda: jnp.diag_indices(3)[0],
    "jnp:diag_indices_from": lambda: jnp.diag_indices_from(jnp.eye(3))[1],
    "jnp:indices": lambda: jnp.indices((2, 3)),
    "jnp:logspace": lambda: jnp.logspace(0.0, 2.0, 5),
    "jnp:geomspace": lambda: jnp.geomspace(1.0, 8.0, 4),
    "jnp:vander": lambda: jnp.vander(v()),
    "jnp:empty": lambda: jnp.empty((2, 3)),
    "jnp:empty_like": lambda: jnp.empty_like(m()),
    "jnp:diagflat": lambda: jnp.diagflat(m()),
    "jnp:bartlett": lambda: jnp.bartlett(5),
    "jnp:blackman": lambda: jnp.blackman(5),
    "jnp:hamming": lambda: jnp.hamming(5),
    "jnp:hanning": lambda: jnp.hanning(5),
    "jnp:array_split": lambda: jnp.array_split(v(), 4)[3],
    "jnp:hsplit": lambda: jnp.hsplit(m(), 3)[2],
    "jnp:vsplit": lambda: jnp.vsplit(m(), 2)[1],
    "jnp:dsplit": lambda: jnp.dsplit(jnp.reshape(v(), (1, 2, 3)), 3)[2],
    "jnp:unstack": lambda: jnp.unstack(m())[1],
    "jnp:broadcast_arrays": lambda: jnp.broadcast_arrays(m(), f32(1, 2, 3))[1],
    "jnp:broadcast_shapes": lambda: jnp.zeros(jnp.broadcast_shapes((2, 1), (3,))),
    "jnp:rollaxis": lambda: jnp.rollaxis(m(), 1),
    "jnp:append": lambda: jnp.append(v(), m()),
    "jnp:delete": lambda: jnp.delete(v(), jnp.array([1, 3])),
    "jnp:resize": lambda: jnp.resize(m(), (4, 2)),
    "jnp:select": lambda: jnp.select([v() > 0.5], [v()], 0.0),
    "jnp:array_equal": lambda: jnp.array_equal(m(), m() + 0.0),
    "jnp:array_equiv": lambda: jnp.array_equiv(m(), jnp.stack([m(), m()])),
    "jnp:polyval": lambda: jnp.polyval(v(), v()),
    "jnp:polyadd": lambda: jnp.polyadd(v(), f32(1, 2, 3)),
    "jnp:polysub": lambda: jnp.polysub(v(), f32(1, 2, 3)),
    "jnp:polymul": lambda: jnp.polymul(v(), f32(1, 2, 3)),
    "jnp:polyder": lambda: jnp.polyder(v()),
    "jnp:polyint": lambda: jnp.polyint(v()),
    "jnp:trapezoid": lambda: jnp.trapezoid(m() * m()),
    "jnp:interp": lambda: jnp.interp(v() * 1.1, v(), v() * v()),
    # pad's modes, take's modes, repeat by array, where(cond, size), save / load, and the
    # function-taking helpers.
    "jnp:pad": lambda: jnp.pad(m(), ((1, 2),), mode="reflect"),
    "jnp:repeat": lambda: jnp.repeat(m(), i32(1, 0, 2), axis=1, total_repeat_length=4),
    "jnp:take": lambda: jnp.take(m(), i32(7, -1), mode="wrap"),
    "jnp:where": lambda: jnp.where(m() - 2.0, size=6)[1],
    "jnp:block": lambda: jnp.block([[m(), m()], [jnp.ones((1, 6))]]),
    "jnp:frombuffer": lambda: jnp.frombuffer(bytes(range(1, 9)), dtype=jnp.int32),
    "jnp:fromfunction": lambda: jnp.fromfunction(lambda i, j: i + 2 * j, (2, 3)),
    "jnp:piecewise": lambda: jnp.piecewise(v(), [v() > 1.0], [jnp.sqrt, 0.5]),
    "jnp:apply_along_axis": lambda: jnp.apply_along_axis(lambda r: jnp.sum(r * r), 1, m()),
    "jnp:apply_over_axes": lambda: jnp.apply_over_axes(jnp.sum, m(), (0, 1)),
    "jnp:vectorize": lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(m(),
                                                                              f32(1, 2, 3)),
    "jnp:histogram2d": lambda: jnp.histogram2d(v(), v() * v(), bins=3)[0],
    "jnp:histogramdd": lambda: jnp.histogramdd(m().T, bins=[2, 4])[0],
    "jnp:polydiv": lambda: jnp.polydiv(v(), f32(1, 2))[0],
    "jnp:polyfit": lambda: jnp.polyfit(v(), v() * v() + 1.0, 2),
    "jnp:save": lambda: save_then_load("api_save.npy"),
    "jnp:load": lambda: save_then_load("api_load.npy"),
    # jnp's complex functions on real arrays and the jnp.fft helpers.
    "jnp:real": lambda: jnp.real(v()),
    "jnp:imag": lambda: jnp.imag(v()),
    "jnp:conj": lambda: jnp.conj(v()),
    "jnp:conjugate": lambda: jnp.conjugate(v()),
    "jnp:angle": lambda: jnp.angle(v() - 1.0),
    "jnp:iscomplex": lambda: jnp.iscomplex(v()),
    "jnp:isreal": lambda: jnp.isreal(v()),
    "jnp:iscomplexobj": lambda: flag(jnp.iscomplexobj(v())),
    "jnp:isrealobj": lambda: flag(jnp.isrealobj(v())),
    # jnp math, bits and dtype information.
    "jnp:gcd": lambda: jnp.gcd(jnp.arange(6), 4),
    "jnp:lcm": lambda: jnp.lcm(jnp.arange(6), 4),
    "jnp:ldexp": lambda: jnp.ldexp(v(), jnp.arange(6)),
    "jnp:frexp": lambda: jnp.frexp(v())[0],
    "jnp:modf": lambda: jnp.modf(v() * 3.0)[1],
    "jnp:nextafter": lambda: jnp.nextafter(v(), jnp.zeros(6)),
    "jnp:bitwise_count": lambda: jnp.bitwise_count(jnp.arange(6)),
    "jnp:bitwise_right_shift": lambda: jnp.bitwise_right_shift(jnp.arange(6), 1),
    "jnp:right_shift": lambda: jnp.right_shift(jnp.arange(6) - 3, 1),
    "jnp:packbits": lambda: jnp.packbits(jnp.arange(6)),
    "jnp:unpackbits": lambda: jnp.unpackbits(jnp.arange(6).astype(jnp.uint8)),
    "jnp:i0": lambda: jnp.i0(v()),
    "jnp:kaiser": lambda: jnp.kaiser(5, 3.0),
    "jnp:unwrap": lambda: jnp.unwrap(v() * 10.0),
    "jnp:gradient": lambda: jnp.gradient(m() * m())[1],
    "jnp:finfo": lambda: jnp.full((1,), float(jnp.finfo(jnp.bfloat16).eps), jnp.float32),
    "jnp:iinfo": lambda: jnp.full((1,), float(jnp.iinfo(jnp.uint8).max), jnp.float32),
    "jnp:can_cast": lambda: flag(jnp.can_cast(jnp.int32, jnp.float64)),
    "jnp:result_type": lambda: jnp.zeros(2, jnp.result_type(m(), 1.0)),
    "jnp:issubdtype": lambda: flag(jnp.issubdtype(jnp.bfloat16, jnp.floating)),
    "jnp:isdtype": lambda: flag(jnp.isdtype(jnp.uint8, "unsigned integer")),
    "jnp:isscalar": lambda: flag(jnp.isscalar(v())),
    "jnp.fft:fft.fftfreq": lambda: fft.fftfreq(8),
    "jnp.fft:fft.rfftfreq": lambda: fft.rfftfreq(8),
    "jnp.fft:fft.fftshift": lambda: fft.fftshift(m()),
    "jnp.fft:fft.ifftshift": lambda: fft.ifftshift(m()),
    # complex values and jnp.fft's transforms.
    "jnp:sort_complex": lambda: jnp.sort_complex(f32(3, 1, 2)),
    "jnp:poly": lambda: jnp.poly(v()),
    "jnp:roots": lambda: jnp.sort_complex(jnp.roots(f32(1, -6, 11, -6))),
    "jnp.linalg:linalg.eig": lambda: jnp.abs(la.eig(sq()).eigenvectors),
    "jnp.linalg:linalg.eigvals": lambda: jnp.sort_complex(la.eigvals(sq())),
    "jnp.fft:fft.fft": lambda: fft.fft(v()),
    "jnp.fft:fft.ifft": lambda: fft.ifft(v()),
    "jnp.fft:fft.fft2": lambda: fft.fft2(m()),
    "jnp.fft:fft.ifft2": lambda: fft.ifft2(m()),
    "jnp.fft:fft.fftn": lambda: fft.fftn(m()),
    "jnp.fft:fft.ifftn": lambda: fft.ifftn(m()),
    "jnp.fft:fft.rfft": lambda: fft.rfft(v()),
    "jnp.fft:fft.irfft": lambda: fft.irfft(fft.rfft(v() * v())),
    "jnp.fft:fft.rfft2": lambda: fft.rfft2(m()),
    "jnp.fft:fft.irfft2": lambda: fft.irfft2(fft.rfft2(m())),
    "jnp.fft:fft.rfftn": lambda: fft.rfftn(m()),
    "jnp.fft:fft.irfftn": lambda: fft.irfftn(fft.rfftn(m() * m())),
    "jnp.fft:fft.hfft": lambda: fft.hfft(fft.ihfft(v() * v())),
    "jnp.fft:fft.ihfft": lambda: fft.ihfft(v()),
    # Optax (the C++ options' defaults, passed explicitly where Optax has none).
    "optax:rmsprop": lambda: step_of(optax.rmsprop(1e-2, decay=0.9, eps=1e-8)),
    "optax:adagrad": lambda: step_of(optax.adagrad(1e-2, initial_accumulator_value=0.1,
                                                   eps=1e-7)),
    "optax:lamb": lambda: step_of(optax.lamb(1e-3, b1=0.9, b2=0.999, eps=1e-6,
                                             weight_decay=0.0)),
    "optax:lars": lambda: step_of(optax.lars(1e-2, weight_decay=0.0, trust_coefficient=0.001,
                                             eps=0.0, momentum=0.9)),
    "optax:adamax": lambda: step_of(optax.adamax(1e-3)),
    "optax:nadam": lambda: step_of(optax.nadam(1e-3)),
    "optax:radam": lambda: step_of(optax.radam(1e-3)),
    "optax:exponential_decay": lambda: optax.exponential_decay(1.0, 10, 0.5)(3),
    "optax:piecewise_constant_schedule":
        lambda: optax.piecewise_constant_schedule(1.0, {5: 0.5})(7),
    "optax:polynomial_schedule": lambda: optax.polynomial_schedule(1.0, 0.1, 2.0, 10)(3),
    "optax:cosine_onecycle_schedule": lambda: optax.cosine_onecycle_schedule(100, 1.0)(30),
    "optax:softmax_cross_entropy": lambda: optax.softmax_cross_entropy(
        m(), jax.nn.softmax(m() * 0.5, -1)),
    "optax:softmax_cross_entropy_with_integer_labels":
        lambda: optax.softmax_cross_entropy_with_integer_labels(m(), i32(0, 2)),
    "optax:l2_loss": lambda: optax.l2_loss(v(), v() * 0.5),
    "optax:huber_loss": lambda: optax.huber_loss(v(), v() * -1.0),
    "optax:sigmoid_binary_cross_entropy": lambda: optax.sigmoid_binary_cross_entropy(
        v(), v() * 0.1),
    "optax:kl_divergence": lambda: optax.kl_divergence(jax.nn.log_softmax(m(), -1),
                                                       jax.nn.softmax(m() * 0.5, -1)),
    "optax:muon": lambda: step_of(optax.contrib.muon(2e-2)),
    "optax:clip": lambda: step_of(optax.clip(0.1)),
    "optax:ema": lambda: step_of(optax.ema(0.9)),
    "optax:multi_transform": lambda: step_of(optax.multi_transform({"a": optax.sgd(1e-2)},
                                                                   ["a"])),
    "optax:inject_hyperparams": lambda: step_of(optax.inject_hyperparams(optax.sgd)(
        learning_rate=0.1)),
    "optax:apply_if_finite": lambda: step_of(optax.apply_if_finite(optax.sgd(1e-2), 1)),
    "optax:zero_nans": lambda: step_of(optax.zero_nans()),
    "optax:apply_every": lambda: step_of(optax.apply_every(2)),
    # jax.nn.
    "jax.nn:relu": lambda: nn.relu(v() - 1.0),
    "jax.nn:relu6": lambda: nn.relu6(v() * 5.0),
    "jax.nn:softplus": lambda: nn.softplus(v()),
    "jax.nn:log_sigmoid": lambda: nn.log_sigmoid(v()),
    "jax.nn:leaky_relu": lambda: nn.leaky_relu(v() - 1.0),
    "jax.nn:elu": lambda: nn.elu(v() - 1.0),
    "jax.nn:celu": lambda: nn.celu(v() - 1.0),
    "jax.nn:selu": lambda: nn.selu(v() - 1.0),
    "jax.nn:glu": lambda: nn.glu(v()),
    "jax.nn:mish": lambda: nn.mish(v()),
    "jax.nn:hard_sigmoid": lambda: nn.hard_sigmoid(v() * 4.0 - 3.0),
    "jax.nn:hard_silu": lambda: nn.hard_silu(v() * 4.0 - 3.0),
    "jax.nn:hard_tanh": lambda: nn.hard_tanh(v() * 2.0 - 2.0),
    "jax.nn:squareplus": lambda: nn.squareplus(v()),
    "jax.nn:standardize": lambda: nn.standardize(m() * m()),
    "jax.nn:dot_product_attention": lambda: nn.dot_product_attention(
        jnp.reshape(jnp.arange(1.0, 17.0), (1, 2, 2, 4)) * 0.1,
        jnp.reshape(jnp.arange(1.0, 9.0), (1, 2, 1, 4)) * 0.1,
        jnp.reshape(jnp.arange(1.0, 9.0), (1, 2, 1, 4)), is_causal=True),
    "jax.nn:initializers.lecun_uniform":
        lambda: nn.initializers.lecun_uniform()(key(), (4, 3), jnp.float32),
    "jax.nn:initializers.lecun_normal":
        lambda: nn.initializers.lecun_normal()(key(), (4, 3), jnp.float32),
    "jax.nn:initializers.orthogonal":
        lambda: nn.initializers.orthogonal()(key(), (4, 3), jnp.float32),
    "jax.nn:initializers.uniform": lambda: nn.initializers.uniform()(key(), (4, 3), jnp.float32),
    # jnp set operations and index tricks.
    "jnp:unique": lambda: jnp.unique(m() - 2.0, size=4),
    "jnp:unique_all": lambda: jnp.unique_all(jnp.floor(v())).counts,
    "jnp:unique_counts": lambda: jnp.unique_counts(jnp.floor(v())).counts,
    "jnp:unique_inverse": lambda: jnp.unique_inverse(jnp.floor(m() * 0.5)).inverse_indices,
    "jnp:unique_values": lambda: jnp.unique_values(jnp.floor(v()), size=6),
    "jnp:intersect1d": lambda: jnp.intersect1d(v() * 4.0, m(), size=3),
    "jnp:union1d": lambda: jnp.union1d(v(), m()),
    "jnp:setdiff1d": lambda: jnp.setdiff1d(m(), v(), size=3),
    "jnp:setxor1d": lambda: jnp.setxor1d(v(), m()),
    "jnp:argpartition": lambda: jnp.argpartition(f32(3, 1, 2, 0.5, 4), 1),
    "jnp:partition": lambda: jnp.partition(f32(3, 1, 2, 0.5, 4), 2),
    "jnp:ravel_multi_index": lambda: jnp.ravel_multi_index((jnp.arange(3), jnp.arange(3)),
                                                           (3, 4)),
    "jnp:unravel_index": lambda: jnp.unravel_index(jnp.arange(5), (2, 3))[1],
    "jnp:ix_": lambda: jnp.ix_(jnp.arange(2), jnp.arange(3))[1],
    "jnp:mask_indices": lambda: jnp.mask_indices(3, jnp.triu)[1],
    "jnp:choose": lambda: jnp.choose(jnp.array([[0, 1, 2], [1, 0, 1]]), [m(), m() * 2.0],
                                     mode="clip"),
    "jnp:compress": lambda: jnp.compress(jnp.array([False, True, True]), m(), axis=1, size=2),
    "jnp:extract": lambda: jnp.extract(m() > 2.0, m()),
    "jnp:insert": lambda: jnp.insert(v(), 2, 9.0),
    "jnp:trim_zeros": lambda: jnp.trim_zeros(f32(0, 0, 1, 2, 0)),
    "jnp:fill_diagonal": lambda: jnp.fill_diagonal(m(), 0.0, inplace=False),
}


def fmt(name, x):
  x = np.asarray(x)
  dt = str(x.dtype)
  shape = ",".join(str(d) for d in x.shape) if x.ndim else "scalar"
  flat = x.ravel()
  if np.issubdtype(x.dtype, np.complexfloating):
    vals = " ".join(f"{float(c.real):.9g} {float(c.imag):.9g}" for c in flat)
  elif np.issubdtype(x.dtype, np.bool_):
    vals = " ".join(str(int(e)) for e in flat)
  elif np.issubdtype(x.dtype, np.integer):
    vals = " ".join(str(int(e)) for e in flat)
  else:
    vals = " ".join(f"{float(e):.9g}" for e in flat)
  return f"{name} {dt} {shape} {vals}".rstrip()


def main():
  lines = [
      "# JAX's results for the calls of graft's tests/api/api_coverage_test.cc.",
      f"# Written by tools/make_api_coverage_vectors.py with JAX {jax.__version__}, Optax "
      f"{optax.__version__} on {jax.default_backend()} (x64 off).",
  ]
  for name, fn in CALLS.items():
    lines.append(fmt(name, fn()))
  os.makedirs(os.path.dirname(OUT), exist_ok=True)
  with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
  print(f"wrote {len(CALLS)} results to {OUT}")


if __name__ == "__main__":
  main()
