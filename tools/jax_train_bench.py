#!/usr/bin/env python3
"""The llama-small train step of bench/configs.md in JAX, for comparing
against graft's `bazel run -c opt //bench:train_bench llama-small` on the same machine (run
them one after the other, not at once). Same model as tools/make_llama_vectors.py (plain jnp,
naive attention as XLA compiles it), AdamW (lr 3e-4, betas 0.9/0.95, eps 1e-8, wd 0.1), clip
1.0, uniform random tokens, 3 warm-up steps then the median of 10.

    pip install jax optax && python3 tools/jax_train_bench.py
"""
import math
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import optax

sys.path.insert(0, os.path.dirname(__file__))
from make_llama_vectors import loss_fn  # noqa: E402  (the reference model)

CFG = dict(vocab=8192, dim=512, layers=8, heads=8, kv_heads=4, ffn=1536, seq=256, batch=8,
           tied=False, theta=10000.0, eps=1e-5, scaling=None)


def init(cfg, key):
    d, L, h, kv, f, v = (cfg[k] for k in ("dim", "layers", "heads", "kv_heads", "ffn", "vocab"))
    hd = d // h
    ks = iter(jax.random.split(key, 16 * L + 8))
    n = lambda shape, s=0.02: jax.random.normal(next(ks), shape, jnp.float32) * s
    o = 0.02 / math.sqrt(2 * L)
    layers = [dict(attn_norm=jnp.ones(d), wq=n((d, h * hd)), wk=n((d, kv * hd)),
                   wv=n((d, kv * hd)), wo=n((h * hd, d), o), ffn_norm=jnp.ones(d),
                   w1=n((d, f)), w2=n((f, d), o), w3=n((d, f))) for _ in range(L)]
    return dict(embed=n((v, d)), layers=layers, final_norm=jnp.ones(d), output=n((d, v)))


def main():
    cfg = CFG
    params = init(cfg, jax.random.PRNGKey(0))
    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.adamw(3e-4, b1=0.9, b2=0.95, eps=1e-8, weight_decay=0.1))
    state = opt.init(params)

    @jax.jit
    def step(p, s, tokens):
        x, y = tokens[:, :-1], tokens[:, 1:]
        w = jnp.ones(y.shape, jnp.float32)
        loss, g = jax.value_and_grad(loss_fn)(p, x, y, w, cfg)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    times = []
    key = jax.random.PRNGKey(1234)
    for i in range(13):
        tokens = jax.random.randint(jax.random.fold_in(key, i), (cfg["batch"], cfg["seq"] + 1), 0,
                                    cfg["vocab"])
        t0 = time.perf_counter()
        params, state, loss = step(params, state, tokens)
        loss = float(loss)
        dt = time.perf_counter() - t0
        print(f"  jax llama-small step {i:2d}: {dt:.3f} s, loss {loss:.4f}" +
              (" (warm-up)" if i < 3 else ""), flush=True)
        if i >= 3:
            times.append(dt)
    med = statistics.median(times)
    print(f"jax {jax.__version__} ({jax.devices()[0].platform}): llama-small median step "
          f"{med:.3f} s, {cfg['batch'] * cfg['seq'] / med:.1f} tokens/s")


if __name__ == "__main__":
    main()
