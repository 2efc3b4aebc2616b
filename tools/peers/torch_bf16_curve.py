#!/usr/bin/env python3
"""PyTorch's loss curve under CPU autocast(bfloat16) against f32, on the main job's model.

The PyTorch counterpart of tools/bf16_loss_curve.py: the same comparison against
PyTorch's CPU autocast(bfloat16). Trains the Llama of torch_llama.py with the model and
optimizer of examples/llama/configs/fortunes.toml (dim 256, 4 layers, 8 heads, 4 kv heads,
ffn 768, untied; AdamW lr 2e-3 with 50 linear warm-up steps from 0 then cosine to 0.1x over
the run, optax's warmup_cosine_decay as graft's, betas 0.9 / 0.95, eps 1e-8, weight decay 0.1
on every parameter except the norms, as graft's main job; global-norm clip 1.0; batch 16,
seq_len 128) twice, eager: f32, then with `torch.autocast("cpu", dtype=torch.bfloat16)` around
the forward and loss (params, gradients and optimizer f32), from the same initial weights
(common.make_weights, seed 0) on the same batches. Prints the training loss (the mean over
each --log-freq interval) of both runs side by side, the validation losses at thirds of the
run (8 fixed batches), and the tokens/s of each run's later intervals. Exit status 1 when a
logged loss differs by more than --tol (absolute, nats; default 0.05).

Data: the fortunes corpus (Debian's `fortunes` package: the plain-text files of
/usr/share/games/fortunes, sorted by name and concatenated, .dat / .u8 skipped), byte-level
tokens (vocabulary 256), the first 90% of the bytes for training and the last 10% for
validation; training batches are windows at offsets drawn with numpy's default_rng(--seed),
validation batches windows at fixed evenly spaced offsets. graft's main job uses a BPE 2048
tokenizer, so the absolute losses are not comparable with graft's; only the bf16 - f32
deviation is.

    ~/.cache/graft-peers/venv/bin/python tools/peers/torch_bf16_curve.py [--steps 300] [--tol 0.05]

Needs torch and numpy (tools/peers/install.sh's venv).
"""
import argparse
import math
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from torch_llama import Llama, make_optimizer  # noqa: E402

FORTUNES = "/usr/share/games/fortunes"

# examples/llama/configs/fortunes.toml, with common.py's key names; vocab 256 (bytes).
CFG = dict(common._BASE, name="fortunes-4m-bytes", vocab=256, dim=256, layers=4, heads=8,
           kv_heads=4, ffn=768, theta=10000.0, eps=1e-5, tied=False, seq=128, batch=16,
           lr=2e-3, b1=0.9, b2=0.95, adam_eps=1e-8, weight_decay=0.1, clip=1.0,
           warmup=50, min_lr_ratio=0.1)


def load_corpus(folder):
    """uint8 bytes of the plain-text fortune files, sorted by name, concatenated."""
    parts = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith((".dat", ".u8")) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            parts.append(f.read())
    if not parts:
        sys.exit(f"no fortune files in {folder} (Debian's `fortunes` package)")
    return np.frombuffer(b"".join(parts), dtype=np.uint8)


def lr_at(cfg, count, steps):
    """optax.warmup_cosine_decay_schedule(0, lr, warmup, steps, lr * min_lr_ratio) at `count`
    (0 for the first update), as graft's make_schedule builds it."""
    peak, warmup = cfg["lr"], min(cfg["warmup"], steps)
    if count < warmup:
        return peak * count / warmup
    decay = max(steps, warmup + 1) - warmup
    c = min(count - warmup, decay)
    alpha = cfg["min_lr_ratio"]
    return peak * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * c / decay)) + alpha)


def windows(data, offsets, seq):
    """inputs, targets int64 [len(offsets), seq] of the windows data[o : o + seq + 1]."""
    idx = np.asarray(offsets, dtype=np.int64)[:, None] + np.arange(seq + 1)[None, :]
    t = torch.from_numpy(data[idx].astype(np.int64))
    return t[:, :-1].contiguous(), t[:, 1:].contiguous()


def train(cfg, bf16, steps, log_freq, train_data, val_batches, seed):
    """Returns ({step: mean loss of the interval}, {step: val loss}, {step: interval tokens/s})."""
    torch.manual_seed(0)
    model = Llama(cfg, common.make_weights(cfg))
    named = list(model.named_parameters())
    # graft's main job decays every leaf but the norms (examples/llama/optimizer.cc).
    groups = [{"params": [p for n, p in named if "norm" not in n]},
              {"params": [p for n, p in named if "norm" in n], "weight_decay": 0.0}]
    params = [p for _, p in named]
    opt, opt_note = make_optimizer(cfg, groups)
    rng = np.random.default_rng(seed)
    n_off = len(train_data) - cfg["seq"] - 1

    def forward(x, y):
        if bf16:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return model(x, y)
        return model(x, y)

    def evaluate():
        with torch.no_grad():
            return statistics.fmean(float(forward(x, y)) for x, y in val_batches)

    name = "bf16" if bf16 else "f32"
    print(f"{name}: torch {torch.__version__}, {opt_note}, {torch.get_num_threads()} threads, "
          f"{sum(p.numel() for p in params):,} parameters", flush=True)
    train_log, val_log, tps = {}, {}, {}
    losses, t_interval = [], 0.0
    eval_every = max(steps // 3, 1)
    for i in range(steps):
        x, y = windows(train_data, rng.integers(0, n_off, cfg["batch"]), cfg["seq"])
        for g in opt.param_groups:
            g["lr"] = lr_at(cfg, i, steps)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = forward(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg["clip"])
        opt.step()
        losses.append(float(loss.detach()))
        t_interval += time.perf_counter() - t0
        s = i + 1
        if s % log_freq == 0 or s == steps:
            train_log[s] = statistics.fmean(losses)
            tps[s] = len(losses) * cfg["batch"] * cfg["seq"] / t_interval
            print(f"  {name} step {s:4d}/{steps} | loss {train_log[s]:.4f} | lr "
                  f"{lr_at(cfg, i, steps):.2e} | {tps[s]:,.0f} tok/s", flush=True)
            losses, t_interval = [], 0.0
        if s % eval_every == 0 and s >= eval_every and len(val_log) < 3:
            val_log[s] = evaluate()
            print(f"  {name} val  {s:4d}/{steps} | loss {val_log[s]:.4f}", flush=True)
    return train_log, val_log, tps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--log-freq", type=int, default=10)
    ap.add_argument("--tol", type=float, default=0.05, help="max |bf16 - f32| logged loss")
    ap.add_argument("--val-batches", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0, help="numpy seed of the training batches")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--corpus", default=FORTUNES)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = dict(CFG)

    data = load_corpus(args.corpus)
    split = int(len(data) * 0.9)
    train_data, val_data = data[:split], data[split:]
    n_val = args.val_batches * cfg["batch"]
    val_offsets = np.linspace(0, len(val_data) - cfg["seq"] - 1, n_val).astype(np.int64)
    val_batches = [windows(val_data, val_offsets[b * cfg["batch"]:(b + 1) * cfg["batch"]],
                           cfg["seq"]) for b in range(args.val_batches)]
    print(f"fortunes corpus: {len(data):,} bytes, {len(train_data):,} / {len(val_data):,} "
          f"train / val byte tokens (vocabulary 256)", flush=True)

    t_start = time.perf_counter()
    curves = {}
    for bf16 in (False, True):
        curves[bf16] = train(cfg, bf16, args.steps, args.log_freq, train_data, val_batches,
                             args.seed)
    wall = time.perf_counter() - t_start
    (ft, fv, ftps), (bt, bv, btps) = curves[False], curves[True]

    print(f"\nPyTorch {torch.__version__} eager, main job model with byte tokens (vocab 256), "
          f"{args.steps} steps, logged every {args.log_freq}: training loss (mean over the "
          "interval) and validation loss\n")
    print("| step | f32 | bf16 | bf16 - f32 |")
    print("| --- | --- | --- | --- |")
    worst = 0.0
    for s in sorted(set(ft) & set(bt)):
        d = bt[s] - ft[s]
        worst = max(worst, abs(d))
        print(f"| {s} | {ft[s]:.4f} | {bt[s]:.4f} | {d:+.4f} |")
    for s in sorted(set(fv) & set(bv)):
        print(f"| val {s} | {fv[s]:.4f} | {bv[s]:.4f} | {bv[s] - fv[s]:+.4f} |")
    late = [s for s in ft if s > args.steps // 2]
    if late and all(s in btps for s in late):
        f, b = statistics.median(ftps[s] for s in late), statistics.median(btps[s] for s in late)
        print(f"\ntokens/s (median of the logged intervals after step {args.steps // 2}, "
              f"{args.threads} threads): f32 {f:,.0f}, bf16 {b:,.0f} ({b / f:.2f}x)")
    print(f"max |bf16 - f32| of the logged training loss: {worst:.4f} (tolerance {args.tol})")
    print(f"wall time (both runs): {wall:.0f} s")
    sys.exit(0 if worst <= args.tol else 1)


if __name__ == "__main__":
    main()
