#!/usr/bin/env python3
"""Reference vectors for graft's MoE layer (nn/moe.h), computed by running JAX.

Writes tests/nn/testdata/moe_small.json (format: tests/util/test_vectors.h). The layer is
written here in plain JAX, independently of graft's code: router logits in f32, softmax or
sigmoid scores, jax.lax.top_k, optional renormalization, a dropless dispatch (stable argsort
by expert, jax.lax.ragged_dot for the experts), combine by scatter-add (.at[].add), shared
SwiGLU experts, the load-balancing loss E * sum_e f_e P_e and the z-loss
mean(logsumexp(logits)^2). Gradients are of L = sum(y * ct) + aux_w * aux + z_w * z w.r.t.
x and every parameter. Inputs are random normal (continuous: no ties among router scores).

Two configurations, prefixed "softmax." (top-2 of 4, normalized, one shared expert) and
"sigmoid." (top-3 of 5, not normalized, no shared expert).

Usage: python3 tools/make_moe_vectors.py
"""

import json
import os
import platform

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")


def moe(p, x, cfg):
    n, d = x.shape
    e, k = cfg["E"], cfg["k"]
    logits = x.astype(jnp.float32) @ p["router"]
    scores = jax.nn.softmax(logits, -1) if cfg["router"] == "softmax" else jax.nn.sigmoid(logits)
    w, idx = jax.lax.top_k(scores, k)
    if cfg["normalize"]:
        w = w / w.sum(-1, keepdims=True)
    flat = idx.reshape(-1)
    order = jnp.argsort(flat, stable=True)
    token = order // k
    gs = jnp.bincount(flat, length=e).astype(jnp.int32)
    xs = x[token]
    a = jax.lax.ragged_dot(xs, p["w1"], gs)
    b = jax.lax.ragged_dot(xs, p["w3"], gs)
    ys = jax.lax.ragged_dot(jax.nn.silu(a) * b, p["w2"], gs)
    ys = ys * w.reshape(-1)[order][:, None]
    y = jnp.zeros_like(x).at[token].add(ys)
    if cfg["shared"] > 0:
        y = y + (jax.nn.silu(x @ p["shared_w1"]) * (x @ p["shared_w3"])) @ p["shared_w2"]
    load = gs.astype(jnp.float32) / (n * k)
    probs = scores if cfg["router"] == "softmax" else scores / scores.sum(-1, keepdims=True)
    aux = e * jnp.sum(load * probs.mean(0))
    z = jnp.mean(jax.nn.logsumexp(logits, -1) ** 2)
    return y, aux, z, load


def case(prefix, cfg, seed, out):
    n, d, e, h, hs = cfg["N"], cfg["dim"], cfg["E"], cfg["h"], cfg["shared"]
    ks = jax.random.split(jax.random.PRNGKey(seed), 9)
    p = {
        "router": jax.random.normal(ks[0], (d, e)) * 0.5,
        "w1": jax.random.normal(ks[1], (e, d, h)) * 0.3,
        "w3": jax.random.normal(ks[2], (e, d, h)) * 0.3,
        "w2": jax.random.normal(ks[3], (e, h, d)) * 0.3,
        "shared_w1": jax.random.normal(ks[4], (d, hs)) * 0.3,
        "shared_w3": jax.random.normal(ks[5], (d, hs)) * 0.3,
        "shared_w2": jax.random.normal(ks[6], (hs, d)) * 0.3,
    }
    x = jax.random.normal(ks[7], (n, d))
    ct = jax.random.normal(ks[8], (n, d))

    def loss(p, x):
        y, aux, z, _ = moe(p, x, cfg)
        return jnp.sum(y * ct) + cfg["aux_w"] * aux + cfg["z_w"] * z

    y, aux, z, load = moe(p, x, cfg)
    l, (gp, gx) = jax.value_and_grad(loss, argnums=(0, 1))(p, x)
    scores = jax.nn.softmax(x @ p["router"], -1)
    arrays = {"x": x, "ct": ct, "y": y, "aux_loss": aux, "z_loss": z, "expert_load": load,
              "loss": l, "grad.x": gx}
    for name, v in p.items():
        arrays["param." + name] = v
        arrays["grad." + name] = gp[name]
    for name, v in arrays.items():
        v = np.asarray(v)
        out[prefix + name] = {"dtype": str(v.dtype), "shape": list(v.shape),
                              "data": v.reshape(-1).tolist()}
    # Sanity: no near-ties among the selected / rejected router scores.
    s = np.sort(np.asarray(jax.nn.sigmoid(x @ p["router"]) if cfg["router"] == "sigmoid"
                           else scores), -1)
    assert np.min(np.diff(s, axis=-1)) > 1e-5, "router score tie"


def main():
    arrays = {}
    cfgs = {
        "softmax.": dict(N=24, dim=8, E=4, k=2, h=6, shared=5, router="softmax", normalize=True,
                         aux_w=0.01, z_w=0.001),
        "sigmoid.": dict(N=20, dim=6, E=5, k=3, h=4, shared=0, router="sigmoid",
                         normalize=False, aux_w=0.1, z_w=0.01),
    }
    meta = {"generator": "tools/make_moe_vectors.py", "jax": jax.__version__,
            "numpy": np.__version__, "python": platform.python_version(),
            "configs": {k: v for k, v in cfgs.items()},
            "loss": "sum(y * ct) + aux_w * aux_loss + z_w * z_loss"}
    for seed, (prefix, cfg) in enumerate(cfgs.items()):
        case(prefix, cfg, seed + 1, arrays)
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "nn", "testdata",
                        "moe_small.json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "arrays": arrays}, f)
    print("wrote", os.path.normpath(path), len(arrays), "arrays")


if __name__ == "__main__":
    main()
