#!/usr/bin/env python3
"""graft's Llama train step in JAX, from the weights and tokens of common.py.

One jitted step (params and optimizer state donated): lax.scan over the stacked layers,
jax.nn.dot_product_attention (is_causal, native GQA: query head h reads kv head h // (H / KV)),
RMSNorm, HF rotate_half rope from common.rope_tables, SwiGLU, untied output, mean token
cross-entropy; optax.chain(clip_by_global_norm(1.0), adamw(3e-4, 0.9, 0.95, eps 1e-8,
wd 0.1)) (optax decays every parameter, as graft's adamw with no mask does). MoE configs:
experts as lax.ragged_dot over the sorted (token, expert) rows; on CPU XLA lowers ragged_dot
densely (every expert computes every row: ~E/k times the routed-expert FLOPs).

    python3 tools/peers/jax_llama.py --config llama-tiny [--steps 10 --warmup 3]
"""
import functools
import os
import sys

import jax
import jax.numpy as jnp
import optax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def nest(weights):
    """common.py's flat names -> a pytree: layers.ffn.w1 -> p["layers"]["ffn"]["w1"]."""
    p = {}
    for name, a in weights.items():
        node = p
        *path, leaf = name.split(".")
        for k in path:
            node = node.setdefault(k, {})
        node[leaf] = jnp.asarray(a)
    return p


def rms_norm(x, w, eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, cos, sin):  # x [B, T, H, D]
    half = x.shape[-1] // 2
    rot = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos[None, :, None, :] + rot * sin[None, :, None, :]


def silu_gate(a, b):
    return jax.nn.silu(a) * b


def moe(m, y, cfg):
    """y [N, D] -> (routed + shared output [N, D], aux_w * aux + z_w * z) as nn/moe.cc."""
    N, D = y.shape
    E, k = cfg["experts"], cfg["top_k"]
    logits = y @ m["router"]
    scores = jax.nn.softmax(logits, axis=-1)
    w, experts = jax.lax.top_k(scores, k)
    w = w / jnp.sum(w, axis=-1, keepdims=True)
    flat = experts.reshape(-1)
    order = jnp.argsort(flat, stable=True)
    sizes = jnp.bincount(flat, length=E).astype(jnp.int32)
    xs = y[order // k]
    h = silu_gate(jax.lax.ragged_dot(xs, m["w1"], sizes), jax.lax.ragged_dot(xs, m["w3"], sizes))
    ys = jax.lax.ragged_dot(h, m["w2"], sizes) * w.reshape(-1)[order][:, None]
    out = jnp.zeros_like(y).at[order // k].add(ys)
    out = out + silu_gate(y @ m["shared_w1"], y @ m["shared_w3"]) @ m["shared_w2"]
    load = sizes.astype(jnp.float32) / (N * k)
    aux = E * jnp.sum(load * jnp.mean(scores, axis=0))
    z = jnp.mean(jnp.square(jax.nn.logsumexp(logits, axis=-1)))
    return out, cfg["aux_w"] * aux + cfg["z_w"] * z


def loss_fn(p, inputs, targets, cfg, cos, sin):
    B, T = inputs.shape
    H, KV, D = cfg["heads"], cfg["kv_heads"], cfg["dim"]
    hd = D // H

    def layer(x, lp):
        y = rms_norm(x, lp["attn_norm"], cfg["eps"])
        q = rope((y @ lp["wq"]).reshape(B, T, H, hd), cos, sin)
        k = rope((y @ lp["wk"]).reshape(B, T, KV, hd), cos, sin)
        v = (y @ lp["wv"]).reshape(B, T, KV, hd)
        a = jax.nn.dot_product_attention(q, k, v, is_causal=True)
        x = x + a.reshape(B, T, D) @ lp["wo"]
        y = rms_norm(x, lp["ffn_norm"], cfg["eps"])
        if common.is_moe(cfg):
            out, extra = moe(lp["moe"], y.reshape(B * T, D), cfg)
            return x + out.reshape(B, T, D), extra
        f = lp["ffn"]
        return x + silu_gate(y @ f["w1"], y @ f["w3"]) @ f["w2"], jnp.float32(0)

    x = p["embed"][inputs]
    x, extra = jax.lax.scan(layer, x, p["layers"])
    x = rms_norm(x, p["final_norm"], cfg["eps"])
    logits = x @ p["output"]
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(nll) + jnp.sum(extra)


def main():
    args = common.parse_args("Llama train step in JAX")
    cfg = common.get_config(args.config)
    params = nest(common.make_weights(cfg))
    cos, sin = (jnp.asarray(t) for t in common.rope_tables(cfg))
    opt = optax.chain(
        optax.clip_by_global_norm(cfg["clip"]),
        optax.adamw(cfg["lr"], b1=cfg["b1"], b2=cfg["b2"], eps=cfg["adam_eps"],
                    weight_decay=cfg["weight_decay"]))
    state = opt.init(params)

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def step(p, s, tokens):
        x, y = tokens[:, :-1], tokens[:, 1:]
        loss, g = jax.value_and_grad(loss_fn)(p, x, y, cfg, cos, sin)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    holder = {"p": params, "s": state}

    def prepare(i):
        return jax.block_until_ready(jax.device_put(common.make_tokens(cfg, i)))

    def run(tokens):
        holder["p"], holder["s"], loss = step(holder["p"], holder["s"], tokens)
        return float(loss)

    note = f"jax {jax.__version__} ({jax.devices()[0].platform}), scan over layers"
    if common.is_moe(cfg):
        note += ", MoE: lax.ragged_dot" + (
            " (dense on CPU: every expert computes every row)"
            if jax.devices()[0].platform == "cpu" else "")
    print(f"jax: {note}", flush=True)
    common.run_steps("jax", cfg, args.warmup, args.steps, prepare, run, note)


if __name__ == "__main__":
    main()
