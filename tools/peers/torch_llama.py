#!/usr/bin/env python3
"""graft's Llama train step in PyTorch, eager (default) or `--compile` (torch.compile of the
loss, forward and backward), from the weights and tokens of common.py.

SDPA attention (is_causal; kv heads repeated for GQA), F.rms_norm, HF rotate_half rope from
common.rope_tables, SwiGLU, untied output, mean token cross-entropy; clip_grad_norm_(1.0) then
AdamW (lr 3e-4, betas 0.9 / 0.95, eps 1e-8, wd 0.1 on every parameter, like graft and optax;
fused=True when it runs on this CPU, else foreach). MoE configs: per-expert matmuls over the
sorted (token, expert) rows, with torch's grouped mm when it runs on CPU, else a loop over
the experts (the RESULT line's note says which).

    python3 tools/peers/torch_llama.py --config llama-tiny [--compile] [--steps 10 --warmup 3]
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def _grouped_mm_fn():
    """torch's grouped mm (a [N, K] @ b [E, K, M] with cumulative row offsets) if it runs on
    CPU in f32 with autograd, else None."""
    fn = getattr(F, "grouped_mm", None) or getattr(torch, "_grouped_mm", None)
    if fn is None:
        return None, "loop over experts (no grouped mm in this torch)"
    try:
        a = torch.randn(6, 8, requires_grad=True)
        b = torch.randn(2, 8, 4, requires_grad=True)
        offs = torch.tensor([2, 6], dtype=torch.int32)
        y = fn(a, b, offs=offs)
        ref = torch.cat([a[:2] @ b[0], a[2:] @ b[1]])
        y.backward(torch.ones_like(y))  # a contiguous upstream gradient, as in the model
        if not torch.allclose(y, ref, atol=1e-5):
            return None, "loop over experts (grouped mm gave wrong results)"
        name = "F.grouped_mm" if fn is getattr(F, "grouped_mm", None) else "torch._grouped_mm"
        return fn, f"{name} (grouped mm on CPU)"
    except Exception as e:  # noqa: BLE001
        return None, f"loop over experts (grouped mm on CPU failed: {type(e).__name__})"


class Llama(torch.nn.Module):
    def __init__(self, cfg, weights):
        super().__init__()
        self.cfg = cfg
        P = lambda a: torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)).clone())
        self.embed = P(weights["embed"])
        self.output = P(weights["output"])
        self.final_norm = P(weights["final_norm"])
        names = [k[len("layers."):] for k in weights if k.startswith("layers.")]
        # One Parameter per layer and leaf (not slices of a stacked tensor, whose gradients
        # would be scattered into full-size zeros for every layer).
        self.layers = torch.nn.ModuleList()
        for l in range(cfg["layers"]):
            m = torch.nn.Module()
            for n in names:
                m.register_parameter(n.replace(".", "_"), P(weights["layers." + n][l]))
            self.layers.append(m)
        cos, sin = common.rope_tables(cfg)
        self.register_buffer("cos", torch.from_numpy(cos)[None, None])  # [1, 1, T, hd]
        self.register_buffer("sin", torch.from_numpy(sin)[None, None])
        self.grouped_mm, self.moe_note = (None, "")
        if common.is_moe(cfg):
            self.grouped_mm, self.moe_note = _grouped_mm_fn()

    def stacked_state(self):
        """{name: numpy} in common.py's layout (for checks)."""
        out = {"embed": self.embed, "output": self.output, "final_norm": self.final_norm}
        for n, _ in self.layers[0].named_parameters():
            key = "layers." + (n.replace("_", ".", 1) if n.startswith(("ffn_w", "moe_")) else n)
            out[key] = torch.stack([getattr(m, n) for m in self.layers])
        return {k: v.detach().numpy() for k, v in out.items()}

    @staticmethod
    def rope(x, cos, sin):  # x [B, H, T, hd]
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rot * sin

    def attention(self, m, x):
        c = self.cfg
        B, T, D = x.shape
        H, KV = c["heads"], c["kv_heads"]
        hd = D // H
        y = F.rms_norm(x, (D,), m.attn_norm, c["eps"])
        q = (y @ m.wq).view(B, T, H, hd).transpose(1, 2)
        k = (y @ m.wk).view(B, T, KV, hd).transpose(1, 2)
        v = (y @ m.wv).view(B, T, KV, hd).transpose(1, 2)
        q, k = self.rope(q, self.cos, self.sin), self.rope(k, self.cos, self.sin)
        if H != KV:  # query head h reads kv head h // (H / KV)
            k = k.repeat_interleave(H // KV, dim=1)
            v = v.repeat_interleave(H // KV, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + a.transpose(1, 2).reshape(B, T, D) @ m.wo

    def ffn(self, m, x):
        y = F.rms_norm(x, (x.shape[-1],), m.ffn_norm, self.cfg["eps"])
        return x + (F.silu(y @ m.ffn_w1) * (y @ m.ffn_w3)) @ m.ffn_w2

    def moe(self, m, x):
        """Returns (x + moe(norm(x)), aux_w * aux + z_w * z) like graft's nn/moe.cc."""
        c = self.cfg
        B, T, D = x.shape
        E, k = c["experts"], c["top_k"]
        y = F.rms_norm(x, (D,), m.ffn_norm, c["eps"]).reshape(B * T, D)
        N = y.shape[0]
        logits = y @ m.moe_router
        scores = torch.softmax(logits, dim=-1)
        w, experts = torch.topk(scores, k, dim=-1)
        w = w / w.sum(-1, keepdim=True)
        flat = experts.reshape(-1)
        order = torch.argsort(flat, stable=True)
        # Static-shape counts (bincount's length depends on the data, which torch.compile
        # would have to treat as dynamic).
        counts = (flat[:, None] == torch.arange(E)).sum(0)
        xs = y[order // k]  # [N k, D] sorted by expert
        if self.grouped_mm is not None:
            offs = torch.cumsum(counts, 0).to(torch.int32)
            g = lambda a, b: self.grouped_mm(a, b, offs=offs)
            h = F.silu(g(xs, m.moe_w1)) * g(xs, m.moe_w3)
            ys = g(h, m.moe_w2)
        else:
            parts = []
            for e, rows in enumerate(torch.split(xs, counts.tolist())):
                parts.append((F.silu(rows @ m.moe_w1[e]) * (rows @ m.moe_w3[e])) @ m.moe_w2[e])
            ys = torch.cat(parts)
        ys = ys * w.reshape(-1)[order, None]
        out = torch.zeros_like(y).index_add_(0, order // k, ys)
        out = out + (F.silu(y @ m.moe_shared_w1) * (y @ m.moe_shared_w3)) @ m.moe_shared_w2
        load = counts.to(torch.float32) / (N * k)
        aux = E * (load * scores.mean(0)).sum()
        z = torch.logsumexp(logits, dim=-1).square().mean()
        return x + out.reshape(B, T, D), c["aux_w"] * aux + c["z_w"] * z

    def forward(self, inputs, targets):
        x = self.embed[inputs]
        extra = 0.0
        for m in self.layers:
            x = self.attention(m, x)
            if common.is_moe(self.cfg):
                x, e = self.moe(m, x)
                extra = extra + e
            else:
                x = self.ffn(m, x)
        x = F.rms_norm(x, (x.shape[-1],), self.final_norm, self.cfg["eps"])
        logits = x @ self.output
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return loss + extra


def make_optimizer(cfg, params):
    kw = dict(lr=cfg["lr"], betas=(cfg["b1"], cfg["b2"]), eps=cfg["adam_eps"],
              weight_decay=cfg["weight_decay"])
    try:
        opt = torch.optim.AdamW(params, fused=True, **kw)
        return opt, "fused AdamW"
    except Exception:  # noqa: BLE001  (fused unsupported on this device / version)
        return torch.optim.AdamW(params, foreach=True, **kw), "foreach AdamW"


def main():
    args = common.parse_args(
        "Llama train step in PyTorch",
        lambda ap: (ap.add_argument("--compile", action="store_true", help="torch.compile"),
                    ap.add_argument("--bf16", action="store_true",
                                    help="CPU autocast(bfloat16): bf16 matmuls, f32 params")))
    torch.set_num_threads(os.cpu_count())
    torch.manual_seed(0)
    cfg = common.get_config(args.config)
    model = Llama(cfg, common.make_weights(cfg))
    params = list(model.parameters())
    opt, opt_note = make_optimizer(cfg, params)
    loss_fn = torch.compile(model) if args.compile else model
    if args.compile and common.is_moe(cfg):
        # bincount / tolist make data-dependent shapes: let dynamo capture them.
        import torch._dynamo as dynamo
        dynamo.config.capture_scalar_outputs = True
        dynamo.config.capture_dynamic_output_shape_ops = True

    def prepare(i):
        t = torch.from_numpy(common.make_tokens(cfg, i)).long()
        return t[:, :-1].contiguous(), t[:, 1:].contiguous()

    def step(xy):
        opt.zero_grad(set_to_none=True)
        if args.bf16:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = loss_fn(*xy)
        else:
            loss = loss_fn(*xy)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg["clip"])
        opt.step()
        return float(loss.detach())

    framework = ("torch-compile" if args.compile else "torch-eager") + ("-bf16" if args.bf16 else "")
    note = f"torch {torch.__version__}, {opt_note}" + (
        f", MoE: {model.moe_note}" if model.moe_note else "")
    print(f"{framework}: {note}, {torch.get_num_threads()} threads", flush=True)
    common.run_steps(framework, cfg, args.warmup, args.steps, prepare, step, note)


if __name__ == "__main__":
    main()
