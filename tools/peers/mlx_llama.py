#!/usr/bin/env python3
"""graft's Llama train step in MLX, from the weights and tokens of common.py.

One mx.compile'd step (model and optimizer state as compile inputs / outputs):
mx.fast.rms_norm, mx.fast.rope (traditional=False: HF's rotate_half layout, checked at start
against common.rope_tables), mx.fast.scaled_dot_product_attention (mask "causal", native GQA),
SwiGLU, untied output, mean token cross-entropy; optim.clip_grad_norm(1.0) then
optim.AdamW(3e-4, betas 0.9 / 0.95, eps 1e-8, wd 0.1 on every parameter,
bias_correction=True: MLX's default skips it, optax / torch / graft do not). MoE configs: the
experts as mx.gather_mm over the sorted (token, expert) rows (a loop when MLX lacks it).

MLX's wheel bundles a single-threaded reference BLAS: run it with OpenBLAS preloaded (see
README.md; compare.py does this).

    LD_PRELOAD=.../libopenblas.so.0 python3 tools/peers/mlx_llama.py --config llama-tiny
"""
import functools
import math
import os
import sys

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


class Layer(nn.Module):
    pass


class Llama(nn.Module):
    def __init__(self, cfg, weights):
        super().__init__()
        self.cfg = cfg
        self.embed = mx.array(weights["embed"])
        self.output = mx.array(weights["output"])
        self.final_norm = mx.array(weights["final_norm"])
        self.layers = []
        for l in range(cfg["layers"]):
            m = Layer()
            for name, a in weights.items():
                if name.startswith("layers."):
                    setattr(m, name[len("layers."):].replace(".", "_"), mx.array(a[l]))
            self.layers.append(m)

    def rope(self, x):  # x [B, H, T, hd]
        return mx.fast.rope(x, x.shape[-1], traditional=False, base=self.cfg["theta"], scale=1.0,
                            offset=0)

    def attention(self, m, x):
        c = self.cfg
        B, T, D = x.shape
        H, KV = c["heads"], c["kv_heads"]
        hd = D // H
        y = mx.fast.rms_norm(x, m.attn_norm, c["eps"])
        q = (y @ m.wq).reshape(B, T, H, hd).transpose(0, 2, 1, 3)
        k = (y @ m.wk).reshape(B, T, KV, hd).transpose(0, 2, 1, 3)
        v = (y @ m.wv).reshape(B, T, KV, hd).transpose(0, 2, 1, 3)
        a = mx.fast.scaled_dot_product_attention(self.rope(q), self.rope(k), v,
                                                 scale=1.0 / math.sqrt(hd), mask="causal")
        return x + a.transpose(0, 2, 1, 3).reshape(B, T, D) @ m.wo

    def ffn(self, m, x):
        y = mx.fast.rms_norm(x, m.ffn_norm, self.cfg["eps"])
        return x + (nn.silu(y @ m.ffn_w1) * (y @ m.ffn_w3)) @ m.ffn_w2

    def moe(self, m, x):
        """(x + moe(norm(x)), aux_w * aux + z_w * z) as graft's nn/moe.cc."""
        c = self.cfg
        B, T, D = x.shape
        E, k = c["experts"], c["top_k"]
        y = mx.fast.rms_norm(x, m.ffn_norm, c["eps"]).reshape(B * T, D)
        N = B * T
        logits = y @ m.moe_router
        scores = mx.softmax(logits, axis=-1)
        experts = mx.stop_gradient(mx.argsort(-scores, axis=-1)[:, :k])
        w = mx.take_along_axis(scores, experts, axis=-1)
        w = w / w.sum(-1, keepdims=True)
        flat = experts.reshape(-1)
        order = mx.argsort(flat)
        token = order // k
        xs = y[token]
        sorted_experts = flat[order]
        if hasattr(mx, "gather_mm"):
            g = lambda a, b: mx.gather_mm(a[:, None, :], b, rhs_indices=sorted_experts,
                                          sorted_indices=True)[:, 0, :]
            ys = g(nn.silu(g(xs, m.moe_w1)) * g(xs, m.moe_w3), m.moe_w2)
        else:  # dense loop: each expert on every row, masked
            ys = mx.zeros((N * k, D))
            for e in range(E):
                h = nn.silu(xs @ m.moe_w1[e]) * (xs @ m.moe_w3[e])
                ys = ys + mx.where((sorted_experts == e)[:, None], h @ m.moe_w2[e], 0.0)
        ys = ys * w.reshape(-1)[order][:, None]
        out = ys[mx.argsort(order)].reshape(N, k, D).sum(axis=1)
        out = out + (nn.silu(y @ m.moe_shared_w1) * (y @ m.moe_shared_w3)) @ m.moe_shared_w2
        counts = (flat[:, None] == mx.arange(E)[None, :]).astype(mx.float32).sum(axis=0)
        load = mx.stop_gradient(counts / (N * k))
        aux = E * (load * scores.mean(axis=0)).sum()
        z = mx.square(mx.logsumexp(logits, axis=-1)).mean()
        return x + out.reshape(B, T, D), c["aux_w"] * aux + c["z_w"] * z

    def __call__(self, inputs, targets):
        x = self.embed[inputs]
        extra = mx.array(0.0)
        for m in self.layers:
            x = self.attention(m, x)
            if common.is_moe(self.cfg):
                x, e = self.moe(m, x)
                extra = extra + e
            else:
                x = self.ffn(m, x)
        x = mx.fast.rms_norm(x, self.final_norm, self.cfg["eps"])
        logits = x @ self.output
        nll = mx.logsumexp(logits, axis=-1) - mx.take_along_axis(
            logits, targets[..., None], axis=-1)[..., 0]
        return nll.mean() + extra


def check_rope(cfg):
    """mx.fast.rope(traditional=False) == x cos + rotate_half(x) sin with common's tables."""
    hd = cfg["dim"] // cfg["heads"]
    cos, sin = common.rope_tables(cfg)
    x = np.random.default_rng(0).standard_normal((1, 1, cfg["seq"], hd)).astype(np.float32)
    half = hd // 2
    ref = x * cos + np.concatenate([-x[..., half:], x[..., :half]], axis=-1) * sin
    got = np.array(mx.fast.rope(mx.array(x), hd, traditional=False, base=cfg["theta"],
                                scale=1.0, offset=0))
    err = float(np.max(np.abs(got - ref)))
    if err > 1e-4:
        raise SystemExit(f"mx.fast.rope(traditional=False) differs from rotate_half by {err}")
    return err


def main():
    args = common.parse_args("Llama train step in MLX")
    cfg = common.get_config(args.config)
    rope_err = check_rope(cfg)
    model = Llama(cfg, common.make_weights(cfg))
    opt = optim.AdamW(learning_rate=cfg["lr"], betas=[cfg["b1"], cfg["b2"]], eps=cfg["adam_eps"],
                      weight_decay=cfg["weight_decay"], bias_correction=True)
    opt.init(model.trainable_parameters())
    state = [model.state, opt.state]
    loss_and_grad = nn.value_and_grad(model, lambda mdl, x, y: mdl(x, y))

    @functools.partial(mx.compile, inputs=state, outputs=state)
    def step(x, y):
        loss, grads = loss_and_grad(model, x, y)
        grads, _ = optim.clip_grad_norm(grads, cfg["clip"])
        opt.update(model, grads)
        return loss

    def prepare(i):
        t = mx.array(common.make_tokens(cfg, i))
        x, y = t[:, :-1], t[:, 1:]
        mx.eval(x, y)
        return x, y

    def run(xy):
        loss = step(*xy)
        mx.eval(loss, state)
        return loss.item()

    blas = os.environ.get("LD_PRELOAD", "")
    note = (f"mlx {mx.__version__}, mx.compile, BLAS: "
            + ("preloaded " + os.path.basename(blas) if "blas" in blas else "bundled"))
    if common.is_moe(cfg):
        note += ", MoE: " + ("mx.gather_mm" if hasattr(mx, "gather_mm") else "loop over experts")
    print(f"mlx: {note}; rope check max err {rope_err:.1e}", flush=True)
    common.run_steps("mlx", cfg, args.warmup, args.steps, prepare, run, note)


if __name__ == "__main__":
    main()
