#!/usr/bin/env python3
"""Reference vectors for graft's Llama (tests/nn/llama_test.cc), computed with plain JAX.

The model below is written directly in jax.numpy from the Llama architecture (HF layout:
rotate_half rope, grouped-query attention by repeating kv heads, SwiGLU, RMSNorm), a
per-layer Python loop and full (unchunked) log-softmax cross-entropy; it is not a
translation of graft's C++. Parameters come from jax.random (normal * 0.02 (0.1 in the second case), output
projections wo / w2 scaled by 1 / sqrt(2 * layers), norm weights drawn near 1 so that they
matter), rounded to 5 significant digits so that the JSON text is exact, then stacked along
a leading [layers] axis (graft's layout; weights are [in, out]).

Recorded per case: params, tokens, targets, logits, loss, a masked loss, and the gradient of
the loss with respect to every parameter.

  python3 tools/make_llama_vectors.py   # writes tests/nn/testdata/llama_*.json
"""
import json
import math
import os
import platform

import jax
import jax.numpy as jnp
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "nn", "testdata")

CASES = {
    # llama-tiny of bench/configs.md
    "llama_tiny": dict(vocab=256, dim=64, layers=2, heads=4, kv_heads=2, ffn=192, seq=32,
                       batch=2, tied=False, theta=10000.0, eps=1e-5, scaling=None, seed=0),
    # smaller, tied output, Llama 3 rope scaling (original_max chosen so that the three
    # branches of apply_scaling all occur for head_dim 8: wavelengths 6.3, 63, 628, 6283
    # against 64 / 4 and 64 / 1), larger weights (std 0.1) so that the positions matter
    "llama_tied_scaled": dict(vocab=64, dim=32, layers=2, heads=4, kv_heads=1, ffn=96, seq=16,
                              batch=2, tied=True, theta=10000.0, eps=1e-5,
                              scaling=dict(factor=8.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0,
                                           original_max_position_embeddings=64),
                              seed=1, std=0.1),
}


def round5(x):
    flat = np.asarray(x, np.float32).ravel()
    return np.array([float("%.5g" % v) for v in flat], np.float32).reshape(np.shape(x))


def make_params(cfg, key):
    d, L, h, kv, f, v = cfg["dim"], cfg["layers"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["vocab"]
    hd = d // h
    ks = iter(jax.random.split(key, 64))
    std = cfg.get("std", 0.02)
    out_std = std / math.sqrt(2 * L)
    nrm = lambda shape, s: round5(jax.random.normal(next(ks), shape, jnp.float32) * s)
    p = {"embed": nrm((v, d), std)}
    layers = []
    for _ in range(L):
        layers.append({
            "attn_norm": round5(1.0 + 0.1 * jax.random.normal(next(ks), (d,))),
            "wq": nrm((d, h * hd), std), "wk": nrm((d, kv * hd), std),
            "wv": nrm((d, kv * hd), std), "wo": nrm((h * hd, d), out_std),
            "ffn_norm": round5(1.0 + 0.1 * jax.random.normal(next(ks), (d,))),
            "w1": nrm((d, f), std), "w2": nrm((f, d), out_std), "w3": nrm((d, f), std),
        })
    p["layers"] = layers
    p["final_norm"] = round5(1.0 + 0.1 * jax.random.normal(next(ks), (d,)))
    if not cfg["tied"]:
        p["output"] = nrm((d, v), std)
    return jax.tree_util.tree_map(jnp.asarray, p)


def inv_freqs(cfg):
    hd = cfg["dim"] // cfg["heads"]
    freqs = 1.0 / (cfg["theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    s = cfg["scaling"]
    if s is None:
        return freqs
    # Meta's llama3 apply_scaling, element by element.
    low_wavelen = s["original_max_position_embeddings"] / s["low_freq_factor"]
    high_wavelen = s["original_max_position_embeddings"] / s["high_freq_factor"]
    out = []
    for fr in freqs:
        wavelen = 2 * math.pi / fr
        if wavelen < high_wavelen:
            out.append(fr)
        elif wavelen > low_wavelen:
            out.append(fr / s["factor"])
        else:
            smooth = (s["original_max_position_embeddings"] / wavelen - s["low_freq_factor"]) / (
                s["high_freq_factor"] - s["low_freq_factor"])
            out.append((1 - smooth) * fr / s["factor"] + smooth * fr)
    return np.array(out)


def rms_norm(x, w, eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, cos, sin):  # x [B, T, H, D]; HF rotate_half
    half = x.shape[-1] // 2
    rot = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos[None, :, None, :] + rot * sin[None, :, None, :]


def forward(p, tokens, cfg):
    B, T = tokens.shape
    h, kv = cfg["heads"], cfg["kv_heads"]
    hd = cfg["dim"] // h
    ang = np.arange(T, dtype=np.float64)[:, None] * inv_freqs(cfg)[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    cos, sin = jnp.asarray(np.cos(ang), jnp.float32), jnp.asarray(np.sin(ang), jnp.float32)
    mask = jnp.tril(jnp.ones((T, T), bool))
    x = p["embed"][tokens]
    for lp in p["layers"]:
        y = rms_norm(x, lp["attn_norm"], cfg["eps"])
        q = rope((y @ lp["wq"]).reshape(B, T, h, hd), cos, sin)
        k = rope((y @ lp["wk"]).reshape(B, T, kv, hd), cos, sin)
        v = (y @ lp["wv"]).reshape(B, T, kv, hd)
        k = jnp.repeat(k, h // kv, axis=2)
        v = jnp.repeat(v, h // kv, axis=2)
        s = jnp.einsum("bthd,bshd->bhts", q, k) / math.sqrt(hd)
        s = jnp.where(mask, s, -jnp.inf)
        a = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, axis=-1), v)
        x = x + a.reshape(B, T, h * hd) @ lp["wo"]
        y = rms_norm(x, lp["ffn_norm"], cfg["eps"])
        x = x + (jax.nn.silu(y @ lp["w1"]) * (y @ lp["w3"])) @ lp["w2"]
    x = rms_norm(x, p["final_norm"], cfg["eps"])
    w_out = p["embed"].T if cfg["tied"] else p["output"]
    return x @ w_out


def loss_fn(p, tokens, targets, weights, cfg):
    logp = jax.nn.log_softmax(forward(p, tokens, cfg), axis=-1)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    return jnp.sum(nll * weights) / jnp.sum(weights)


def stacked(p):
    """graft's layout: per-layer weights stacked along a leading [layers] axis."""
    out = {"embed": p["embed"], "final_norm": p["final_norm"]}
    for name in p["layers"][0]:
        prefix = "layers.ffn." if name in ("w1", "w2", "w3") else "layers."
        out[prefix + name] = jnp.stack([lp[name] for lp in p["layers"]])
    if "output" in p:
        out["output"] = p["output"]
    return out


def encode(a, digits):
    a = np.asarray(a)
    if a.dtype == np.int32:
        data = [int(v) for v in a.ravel()]
        return {"dtype": "int32", "shape": list(a.shape), "data": data}
    fmt = "%." + str(digits) + "g"
    return {"dtype": "float32", "shape": list(a.shape),
            "data": [float(fmt % v) for v in a.astype(np.float32).ravel()]}


def make_case(name, cfg):
    key = jax.random.PRNGKey(cfg["seed"])
    kp, kt = jax.random.split(key)
    p = make_params(cfg, kp)
    seq = jax.random.randint(kt, (cfg["batch"], cfg["seq"] + 1), 0, cfg["vocab"], jnp.int32)
    tokens, targets = seq[:, :-1], seq[:, 1:]
    ones = jnp.ones(tokens.shape, jnp.float32)
    # The masked loss ignores the first 5 positions of row 0 and the last 3 of row 1.
    mask = ones.at[0, :5].set(0.0).at[1, -3:].set(0.0)
    logits = forward(p, tokens, cfg)
    loss, grads = jax.value_and_grad(loss_fn)(p, tokens, targets, ones, cfg)
    loss_masked = loss_fn(p, tokens, targets, mask, cfg)
    arrays = {"tokens": encode(tokens, 0), "targets": encode(targets, 0),
              "mask": encode(mask, 1), "logits": encode(logits, 7),
              "loss": encode(loss, 8), "loss_masked": encode(loss_masked, 8)}
    for k, v in stacked(p).items():
        arrays["params." + k] = encode(v, 5)  # exact: params are 5-digit decimals already
    for k, v in stacked(grads).items():
        arrays["grad." + k] = encode(v, 6)
    meta = {"generator": "tools/make_llama_vectors.py", "jax": jax.__version__,
            "numpy": np.__version__, "python": platform.python_version(),
            "backend": jax.default_backend(), "config": cfg,
            "how": "plain-JAX Llama forward (per-layer loop, full log_softmax), "
                   "jax.value_and_grad of the mean token cross-entropy; f32"}
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "arrays": arrays}, f, separators=(",", ":"))
    print(path, os.path.getsize(path), "bytes, loss", float(loss))


if __name__ == "__main__":
    for n, c in CASES.items():
        make_case(n, c)
