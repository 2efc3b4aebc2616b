#!/usr/bin/env python3
"""Shared pieces of the peer train-step benchmarks (tools/peers/*.py) and graft's
bench/peer_step.cc: the configurations of bench/configs.md, FLOPs per token
(torchtitan's formula), and deterministic weights and tokens made with numpy so that every
framework starts from identical numbers.

Weights are in graft's layout: [in, out] matrices (x @ w), per-layer weights stacked on a
leading [layers] axis, leaf names = graft's pytree paths (layers.wq, layers.ffn.w1, ...; MoE
configs: layers.moe.router, layers.moe.w1 [L, E, dim, h], ...). Tokens: step i draws
[batch, seq + 1] uniform ints in [0, vocab) from numpy's default_rng(TOKEN_SEED + i).

    python3 tools/peers/common.py --export /tmp/tiny.safetensors --config llama-tiny --steps 13
        writes the weights and the tokens of steps 0..12 ([13, batch, seq + 1] int32, named
        "tokens") for bench/peer_step.cc; the config goes into the file's metadata.
"""
import argparse
import json
import math
import os
import time

import numpy as np

WEIGHT_SEED = 0
TOKEN_SEED = 1234

_BASE = dict(theta=10000.0, eps=1e-5, tied=False, init_std=0.02,
             lr=3e-4, b1=0.9, b2=0.95, adam_eps=1e-8, weight_decay=0.1, clip=1.0)

CONFIGS = {
    # bench/configs.md
    "llama-tiny": dict(_BASE, vocab=256, dim=64, layers=2, heads=4, kv_heads=2, ffn=192,
                       seq=32, batch=2),
    "llama-small": dict(_BASE, vocab=8192, dim=512, layers=8, heads=8, kv_heads=4, ffn=1536,
                        seq=256, batch=8),
    # llama-small with every FFN an MoE: 8 routed experts (hidden 512), top-2, softmax router,
    # renormalized top-k weights, one shared expert (hidden 512), aux 0.01, z 0.001, dropless.
    "moe-small": dict(_BASE, vocab=8192, dim=512, layers=8, heads=8, kv_heads=4, ffn=1536,
                      seq=256, batch=8, experts=8, top_k=2, expert_ffn=512, shared=1,
                      shared_ffn=512, aux_w=0.01, z_w=0.001),
    # graft's MoELlamaConfig::tiny(): llama-tiny with 4 experts (hidden 64), top-2, one shared
    # expert (64); for parity checks of the MoE peers.
    "moe-tiny": dict(_BASE, vocab=256, dim=64, layers=2, heads=4, kv_heads=2, ffn=192,
                     seq=32, batch=2, experts=4, top_k=2, expert_ffn=64, shared=1,
                     shared_ffn=64, aux_w=0.01, z_w=0.001),
}


def is_moe(cfg):
    return "experts" in cfg


def get_config(name):
    if name not in CONFIGS:
        raise SystemExit(f"unknown config {name!r}; one of {', '.join(CONFIGS)}")
    return dict(CONFIGS[name], name=name)


def matmul_params(cfg):
    """N of torchtitan's formula: attention, MLP (MoE: router, shared experts and top_k /
    n_experts of the routed experts) and the output projection; not the embedding or norms."""
    d, hd = cfg["dim"], cfg["dim"] // cfg["heads"]
    attn = d * cfg["heads"] * hd * 2 + d * cfg["kv_heads"] * hd * 2
    if is_moe(cfg):
        mlp = (d * cfg["experts"] + 3 * d * cfg["shared"] * cfg["shared_ffn"] +
               cfg["top_k"] * 3 * d * cfg["expert_ffn"])
    else:
        mlp = 3 * d * cfg["ffn"]
    return cfg["layers"] * (attn + mlp) + d * cfg["vocab"]


def flops_per_token(cfg):
    """torchtitan: 6 N + 12 L H d_head T."""
    hd = cfg["dim"] // cfg["heads"]
    return 6.0 * matmul_params(cfg) + 12.0 * cfg["layers"] * cfg["heads"] * hd * cfg["seq"]


def make_weights(cfg, seed=WEIGHT_SEED):
    """{name: float32 array} in graft's layout. normal(0, init_std) for every matrix (and the
    embedding), output projections (wo, w2, MoE w2 and shared_w2) times 1 / sqrt(2 layers),
    norms ones. Drawn in the fixed order of the names below from one generator."""
    rng = np.random.default_rng(seed)
    L, d, h, kv, v = cfg["layers"], cfg["dim"], cfg["heads"], cfg["kv_heads"], cfg["vocab"]
    hd = d // h
    s = cfg["init_std"]
    o = s / math.sqrt(2 * L)

    def n(shape, std):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    w = {
        "embed": n((v, d), s),
        "output": n((d, v), s),
        "final_norm": np.ones((d,), np.float32),
        "layers.attn_norm": np.ones((L, d), np.float32),
        "layers.wq": n((L, d, h * hd), s),
        "layers.wk": n((L, d, kv * hd), s),
        "layers.wv": n((L, d, kv * hd), s),
        "layers.wo": n((L, h * hd, d), o),
        "layers.ffn_norm": np.ones((L, d), np.float32),
    }
    if is_moe(cfg):
        e, f, hs = cfg["experts"], cfg["expert_ffn"], cfg["shared"] * cfg["shared_ffn"]
        w["layers.moe.router"] = n((L, d, e), s)
        w["layers.moe.w1"] = n((L, e, d, f), s)
        w["layers.moe.w3"] = n((L, e, d, f), s)
        w["layers.moe.w2"] = n((L, e, f, d), o)
        w["layers.moe.shared_w1"] = n((L, d, hs), s)
        w["layers.moe.shared_w3"] = n((L, d, hs), s)
        w["layers.moe.shared_w2"] = n((L, hs, d), o)
    else:
        w["layers.ffn.w1"] = n((L, d, cfg["ffn"]), s)
        w["layers.ffn.w2"] = n((L, cfg["ffn"], d), o)
        w["layers.ffn.w3"] = n((L, d, cfg["ffn"]), s)
    return w


def make_tokens(cfg, step, seed=TOKEN_SEED):
    """int32 [batch, seq + 1] of step `step`: inputs are [:, :-1], targets [:, 1:]."""
    rng = np.random.default_rng(seed + step)
    return rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1), dtype=np.int32)


def rope_tables(cfg):
    """cos, sin [seq, head_dim] (float32, angles in float64) in the HF rotate_half layout."""
    hd = cfg["dim"] // cfg["heads"]
    inv = 1.0 / (cfg["theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    ang = np.arange(cfg["seq"], dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def export(path, cfg, steps):
    from safetensors.numpy import save_file
    tensors = dict(make_weights(cfg))
    tensors["tokens"] = np.stack([make_tokens(cfg, i) for i in range(steps)])
    meta = {k: str(v) for k, v in cfg.items()}
    save_file(tensors, path, metadata=meta)


# ------------------------------------------------------------------ shared driver pieces

def parse_args(description, extra=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--config", default="llama-tiny", choices=list(CONFIGS))
    ap.add_argument("--steps", type=int, default=10, help="timed steps (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up steps (default 3)")
    if extra:
        extra(ap)
    return ap.parse_args()


def run_steps(framework, cfg, warmup, steps, prepare, step_fn, note=""):
    """Runs warmup + steps train steps. prepare(i) -> the step's inputs (outside the timing);
    step_fn(inputs) -> the loss as a Python float (it must wait for the step to finish).
    Prints one line per step and the RESULT line; returns the losses."""
    losses, times = [], []
    for i in range(warmup + steps):
        inputs = prepare(i)
        t0 = time.perf_counter()
        loss = step_fn(inputs)
        dt = time.perf_counter() - t0
        losses.append(loss)
        if i >= warmup:
            times.append(dt)
        print(f"  {framework} {cfg['name']} step {i:2d}: {dt:.4f} s, loss {loss:.6f}"
              + (" (warm-up)" if i < warmup else ""), flush=True)
    # The upper middle of an even count, as graft's benches take it.
    med = sorted(times)[len(times) // 2] if times else float("nan")
    tps = cfg["batch"] * cfg["seq"] / med
    fields = dict(framework=framework, config=cfg["name"], tokens_per_s=f"{tps:.1f}",
                  step_s=f"{med:.5f}", gflop_per_s=f"{flops_per_token(cfg) * tps / 1e9:.1f}",
                  loss0=f"{losses[0]:.7g}" if losses else "nan",
                  loss2=f"{losses[2]:.7g}" if len(losses) > 2 else "nan")
    if note:
        print(f"NOTE {note}", flush=True)
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="llama-tiny", choices=list(CONFIGS))
    ap.add_argument("--export", metavar="PATH", help="write weights + tokens (safetensors)")
    ap.add_argument("--steps", type=int, default=13, help="token batches to export")
    args = ap.parse_args()
    cfg = get_config(args.config)
    if args.export:
        export(args.export, cfg, args.steps)
        print(f"wrote {args.export} ({os.path.getsize(args.export)} bytes): {args.config}, "
              f"tokens of {args.steps} steps")
    else:
        print(json.dumps(dict(cfg, matmul_params=matmul_params(cfg),
                              flops_per_token=flops_per_token(cfg)), indent=1))


if __name__ == "__main__":
    main()
