#!/usr/bin/env python3
"""Write tests/nn/testdata/jax_nn_vectors.json: jax.nn activations and initializers.

Made by running JAX 0.10.2 on CPU (default config: jax_enable_x64=False, so all values are
f32) with

    ~/.cache/graft-peers/venv/bin/python tools/make_jax_nn_vectors.py

and read by tests/nn/jax_nn_parity_test.cc through tests/util/test_vectors.h (the JSON
format described there; floats are written as Python reprs of the f32 values, so they
round-trip exactly).

Contents:
  act/x                      the fixed f32 input: 0, tiny, kinks (+-1, -3, 3, 6), large
  act/<name>/value           jax.nn.<name>(x) (with the parameters in the name)
  act/<name>/grad            jax.grad(lambda x: jnp.sum(jax.nn.<name>(x)))(x)
  act/<name>/grad2           the second derivative: jax.grad of the sum of the above
  vec/w                      fixed weights (2, 11) for the non-elementwise functions
  vec/<name>/value, /grad    f(x.reshape(2, 11)) and grad of sum(w * f(...)) (the plain sum
                             would give softmax / standardize a zero gradient)
  init/<name>                jax.nn.initializers.<name>(...)(jax.random.PRNGKey(42), shape)
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "nn", "testdata",
                   "jax_nn_vectors.json")

X = np.array([-100.0, -20.0, -6.0, -3.5, -3.0, -2.0, -1.5, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.5,
              1.0, 1.5, 2.0, 3.0, 3.5, 6.0, 7.0, 20.0, 100.0], dtype=np.float32)

arrays = {}


def put(name, a):
    a = np.asarray(a)
    assert a.dtype == np.float32, (name, a.dtype)
    assert np.all(np.isfinite(a)), name
    arrays[name] = {"dtype": "float32", "shape": list(a.shape),
                    "data": [float(v) for v in a.reshape(-1)]}


nn = jax.nn
ELEMENTWISE = {
    "relu": nn.relu,
    "relu6": nn.relu6,
    "sigmoid": nn.sigmoid,
    "softplus": nn.softplus,
    "soft_sign": nn.soft_sign,
    "log_sigmoid": nn.log_sigmoid,
    "leaky_relu": nn.leaky_relu,
    "leaky_relu_0.2": lambda x: nn.leaky_relu(x, 0.2),
    "elu": nn.elu,
    "elu_0.5": lambda x: nn.elu(x, 0.5),
    "celu": nn.celu,
    "celu_2": lambda x: nn.celu(x, 2.0),
    "selu": nn.selu,
    "silu": nn.silu,
    "swish": nn.swish,
    "gelu": nn.gelu,
    "gelu_exact": lambda x: nn.gelu(x, approximate=False),
    "mish": nn.mish,
    "hard_sigmoid": nn.hard_sigmoid,
    "hard_silu": nn.hard_silu,
    "hard_swish": nn.hard_swish,
    "hard_tanh": nn.hard_tanh,
    "squareplus": nn.squareplus,
    "squareplus_1": lambda x: nn.squareplus(x, 1.0),
    "sparse_plus": nn.sparse_plus,
    "sparse_sigmoid": nn.sparse_sigmoid,
    "identity": nn.identity,
}

put("act/x", X)
x = jnp.asarray(X)
for name, f in ELEMENTWISE.items():
    put(f"act/{name}/value", f(x))
    d1 = lambda v, f=f: jnp.sum(jax.grad(lambda u: jnp.sum(f(u)))(v))
    put(f"act/{name}/grad", jax.grad(lambda v: jnp.sum(f(v)))(x))
    put(f"act/{name}/grad2", jax.grad(d1)(x))

# log1mexp is defined for x > 0 only.
X1 = np.array([1e-3, 0.1, 0.5, 0.6931, 0.6932, 1.0, 3.0, 20.0], dtype=np.float32)
put("log1mexp/x", X1)
put("log1mexp/value", nn.log1mexp(jnp.asarray(X1)))
put("log1mexp/grad", jax.grad(lambda v: jnp.sum(nn.log1mexp(v)))(jnp.asarray(X1)))

# Functions over axes, on x as (2, 11) (row 0 holds the large negatives, row 1 the positives),
# differentiated through a weighted sum.
X2 = X.reshape(2, 11)
W = np.linspace(-1.0, 2.0, 22, dtype=np.float32).reshape(2, 11)
put("vec/x", X2)
put("vec/w", W)
X2S = X2 / np.float32(10)  # softmax over the whole array is not one-hot at this scale
put("vec/xs", X2S)
MASK = np.arange(22).reshape(2, 11) % 3 != 1
B_POS = np.linspace(0.25, 2.0, 22, dtype=np.float32).reshape(2, 11)
# Row 0 sums positive, row 1 negative.
B_MIXED = np.stack([np.linspace(0.5, 1.0, 11), -np.linspace(0.5, 1.0, 11)]).astype(np.float32)
put("vec/mask", MASK.astype(np.float32))
put("vec/b_pos", B_POS)
put("vec/b_mixed", B_MIXED)
VEC = {
    "softmax": (X2, lambda v: nn.softmax(v)),
    "softmax_axis0": (X2, lambda v: nn.softmax(v, axis=0)),
    "softmax_all": (X2S, lambda v: nn.softmax(v, axis=(0, 1))),
    "log_softmax": (X2, lambda v: nn.log_softmax(v)),
    "log_softmax_axis0": (X2, lambda v: nn.log_softmax(v, axis=0)),
    "log_softmax_all": (X2S, lambda v: nn.log_softmax(v, axis=(0, 1))),
    "logsumexp_axis1": (X2, lambda v: nn.logsumexp(v, axis=1)),
    "logsumexp_axis0_keep": (X2, lambda v: nn.logsumexp(v, axis=0, keepdims=True)),
    "logmeanexp_axis1": (X2, lambda v: nn.logmeanexp(v, axis=1)),
    "standardize": (X2S, lambda v: nn.standardize(v)),
    "standardize_axis0": (X2S, lambda v: nn.standardize(v, axis=0)),
    "standardize_all_eps": (X2S, lambda v: nn.standardize(v, axis=(0, 1), epsilon=0.1)),
    "glu_axis0": (X2, lambda v: nn.glu(v, axis=0)),
    "glu_last": (X.reshape(11, 2), lambda v: nn.glu(v)),
    # where= and b=: MASK leaves out a third of each row, none of a column; B mixes signs.
    "softmax_where": (X2, lambda v: nn.softmax(v, where=MASK)),
    "softmax_where_axis0": (X2, lambda v: nn.softmax(v, axis=0, where=MASK)),
    # (-inf where masked out, which the format cannot hold: recorded as 0 there.)
    "log_softmax_where": (X2, lambda v: jnp.where(MASK, nn.log_softmax(v, where=MASK), 0)),
    "logsumexp_where": (X2, lambda v: nn.logsumexp(v, axis=1, where=MASK)),
    "logsumexp_b": (X2, lambda v: nn.logsumexp(v, axis=1, b=B_POS)),
    "logsumexp_b_sign": (X2, lambda v: jnp.stack(nn.logsumexp(v, axis=1, b=B_MIXED,
                                                              return_sign=True))),
    "logsumexp_b_where_all": (X2, lambda v: nn.logsumexp(v, b=B_POS, where=MASK)),
}
for name, (xin, f) in VEC.items():
    xin = jnp.asarray(xin)
    y = f(xin)
    put(f"vec/{name}/value", y)
    wy = jnp.asarray(np.linspace(0.5, 1.5, y.size, dtype=np.float32).reshape(y.shape))
    put(f"vec/{name}/grad", jax.grad(lambda v: jnp.sum(wy * f(v)))(xin))

put("one_hot", nn.one_hot(jnp.array([0, 2, -1, 5, 1]), 4))
put("one_hot_axis0", nn.one_hot(jnp.array([[0, 3], [1, 2]]), 4, axis=0))

# Initializers for one key.
ini = jax.nn.initializers
key = jax.random.PRNGKey(42)
INITS = {
    "lecun_uniform_5x7": (ini.lecun_uniform(), (5, 7)),
    "lecun_normal_5x7": (ini.lecun_normal(), (5, 7)),
    "lecun_normal_conv": (ini.lecun_normal(), (3, 3, 4, 6)),
    "glorot_uniform_5x7": (ini.glorot_uniform(), (5, 7)),
    "glorot_normal_5x7": (ini.glorot_normal(), (5, 7)),
    "xavier_uniform_conv": (ini.xavier_uniform(), (3, 3, 4, 6)),
    "he_uniform_5x7": (ini.he_uniform(), (5, 7)),
    "he_normal_5x7": (ini.he_normal(), (5, 7)),
    "kaiming_normal_conv": (ini.kaiming_normal(), (3, 3, 4, 6)),
    "vs_normal_fan_out_2.5": (ini.variance_scaling(2.5, "fan_out", "normal"), (5, 7)),
    "vs_uniform_fan_avg_0.3": (ini.variance_scaling(0.3, "fan_avg", "uniform"), (6, 4)),
    "uniform_default": (ini.uniform(), (5, 7)),
    "uniform_10": (ini.uniform(10.0), (5, 7)),
    "normal_default": (ini.normal(), (5, 7)),
    "normal_3": (ini.normal(3.0), (5, 7)),
    "truncated_normal_default": (ini.truncated_normal(), (5, 7)),
    "constant_m7": (ini.constant(-7.0), (2, 3)),
    "zeros": (ini.zeros, (2, 3)),
    "ones": (ini.ones, (2, 3)),
    "orthogonal_5x7": (ini.orthogonal(), (5, 7)),
    "orthogonal_7x5": (ini.orthogonal(), (7, 5)),
    "orthogonal_3x4x6_scale2": (ini.orthogonal(2.0), (3, 4, 6)),
    "orthogonal_4x6_axis0": (ini.orthogonal(column_axis=0), (4, 6)),
    "delta_orthogonal_3x4x4": (ini.delta_orthogonal(), (3, 4, 4)),
}
for name, (f, shape) in INITS.items():
    put(f"init/{name}", f(key, shape, jnp.float32))

meta = {"generator": "tools/make_jax_nn_vectors.py", "jax": jax.__version__,
        "numpy": np.__version__, "backend": jax.default_backend(), "x64": False}
with open(OUT, "w") as fh:
    json.dump({"meta": meta, "arrays": arrays}, fh, indent=None)
    fh.write("\n")
print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}", file=sys.stderr)
