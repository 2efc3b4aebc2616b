#!/usr/bin/env python3
"""Reference vectors for graft's MoE Llama (nn/moe_llama.h), computed by running JAX.

The model is assembled here from the two plain-JAX references: the Llama blocks of
tools/make_llama_vectors.py (rms_norm, rope, attention) and the MoE layer of
tools/make_moe_vectors.py (softmax router, lax.top_k, renormalized, ragged_dot experts, a
shared expert, load-balancing and z-losses). Every layer's feed-forward is the MoE; the loss
is the mean token cross-entropy plus, summed over layers, aux_w * aux + z_w * z. Params are
random normal (std 0.1, so routing is not uniform) and exported in graft's layout: per-layer
weights stacked on a leading [layers] axis, leaf names = graft leaf paths.

Writes tests/nn/testdata/moe_llama_tiny.json. Usage: python3 tools/make_moe_llama_vectors.py
"""
import json
import math
import os
import platform
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")
sys.path.insert(0, os.path.dirname(__file__))
from make_llama_vectors import rms_norm, rope  # noqa: E402
from make_moe_vectors import moe  # noqa: E402

CFG = dict(vocab=64, dim=16, layers=2, heads=4, kv_heads=2, seq=12, batch=2, theta=10000.0,
           eps=1e-5, E=4, k=2, h=12, shared=12, router="softmax", normalize=True,
           aux_w=0.01, z_w=0.001)


def init(cfg, key):
    d, L, h, kv, v = cfg["dim"], cfg["layers"], cfg["heads"], cfg["kv_heads"], cfg["vocab"]
    hd, e, f, s = d // h, cfg["E"], cfg["h"], cfg["shared"]
    ks = iter(jax.random.split(key, 32))
    n = lambda shape, std=0.1: jax.random.normal(next(ks), shape, jnp.float32) * std
    return {
        "embed": n((v, d), 1.0),
        "moe_layers": {
            "attn_norm": 1.0 + n((L, d)), "wq": n((L, d, h * hd), 0.3),
            "wk": n((L, d, kv * hd), 0.3), "wv": n((L, d, kv * hd), 0.3),
            "wo": n((L, h * hd, d), 0.3), "ffn_norm": 1.0 + n((L, d)),
            "moe": {"router": n((L, d, e), 0.5), "w1": n((L, e, d, f), 0.3),
                    "w3": n((L, e, d, f), 0.3), "w2": n((L, e, f, d), 0.3),
                    "shared_w1": n((L, d, s), 0.3), "shared_w3": n((L, d, s), 0.3),
                    "shared_w2": n((L, s, d), 0.3)},
        },
        "final_norm": 1.0 + n((d,)),
        "output": n((d, v), 0.3),
    }


def loss_fn(p, tokens, targets, cfg):
    B, T = tokens.shape
    h, kv, d = cfg["heads"], cfg["kv_heads"], cfg["dim"]
    hd = d // h
    inv = 1.0 / (cfg["theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    ang = np.arange(T, dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    cos, sin = jnp.asarray(np.cos(ang), jnp.float32), jnp.asarray(np.sin(ang), jnp.float32)
    mask = jnp.tril(jnp.ones((T, T), bool))
    x = p["embed"][tokens]
    extra = 0.0
    m = p["moe_layers"]
    for l in range(cfg["layers"]):
        y = rms_norm(x, m["attn_norm"][l], cfg["eps"])
        q = rope((y @ m["wq"][l]).reshape(B, T, h, hd), cos, sin)
        k = rope((y @ m["wk"][l]).reshape(B, T, kv, hd), cos, sin)
        v = (y @ m["wv"][l]).reshape(B, T, kv, hd)
        k, v = jnp.repeat(k, h // kv, axis=2), jnp.repeat(v, h // kv, axis=2)
        s = jnp.where(mask, jnp.einsum("bthd,bshd->bhts", q, k) / math.sqrt(hd), -jnp.inf)
        a = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, axis=-1), v)
        x = x + a.reshape(B, T, h * hd) @ m["wo"][l]
        y = rms_norm(x, m["ffn_norm"][l], cfg["eps"]).reshape(B * T, d)
        layer = jax.tree_util.tree_map(lambda w: w[l], m["moe"])
        out, aux, z, _ = moe(layer, y, cfg)
        x = x + out.reshape(B, T, d)
        extra = extra + cfg["aux_w"] * aux + cfg["z_w"] * z
    x = rms_norm(x, p["final_norm"], cfg["eps"])
    logp = jax.nn.log_softmax(x @ p["output"], axis=-1)
    ce = -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0])
    return ce + extra, ce


def main():
    cfg = CFG
    p = init(cfg, jax.random.PRNGKey(7))
    kt = jax.random.split(jax.random.PRNGKey(8), 2)
    tokens = jax.random.randint(kt[0], (cfg["batch"], cfg["seq"]), 0, cfg["vocab"])
    targets = jax.random.randint(kt[1], (cfg["batch"], cfg["seq"]), 0, cfg["vocab"])
    (loss, ce), g = jax.value_and_grad(loss_fn, has_aux=True)(p, tokens, targets, cfg)
    arrays = {}

    def put(name, v):
        v = np.asarray(v)
        arrays[name] = {"dtype": str(v.dtype), "shape": list(v.shape),
                        "data": v.reshape(-1).tolist()}

    for path, leaf in jax.tree_util.tree_flatten_with_path(p)[0]:
        name = ".".join(k.key for k in path)
        put("param." + name, leaf)
    for path, leaf in jax.tree_util.tree_flatten_with_path(g)[0]:
        put("grad." + ".".join(k.key for k in path), leaf)
    put("tokens", tokens)
    put("targets", targets)
    put("loss", loss)
    put("cross_entropy", ce)
    meta = {"generator": "tools/make_moe_llama_vectors.py", "jax": jax.__version__,
            "numpy": np.__version__, "python": platform.python_version(), "config": cfg}
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "nn", "testdata",
                        "moe_llama_tiny.json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "arrays": arrays}, f)
    print("wrote", os.path.normpath(path), len(arrays), "arrays, loss", float(loss))


if __name__ == "__main__":
    main()
