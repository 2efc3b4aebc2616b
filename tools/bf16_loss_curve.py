#!/usr/bin/env python3
"""The main job's loss curve in bf16 mixed precision against f32.

Runs the README's main job (examples/llama, configs/fortunes.toml) twice in fresh processes,
`model.compute_dtype` float32 and then bfloat16, for --steps steps (300 by default) with a
progress line every --log-freq steps, and prints both curves side by side: the logged
training loss (the mean over the interval), the validation losses, the difference, and the
tokens/s of each run's later intervals. Exit status 1 when a logged loss differs by more than
--tol (absolute, nats; default 0.05) after the first --skip steps.

    bazel build -c opt //examples/llama
    python3 tools/bf16_loss_curve.py [--steps 300] [--tol 0.05]

Needs only the standard library and the built binary (bazel-bin/examples/llama/llama).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP = re.compile(r"^step\s+(\d+)/\d+ \| loss ([0-9.]+) .*\| ([0-9,]+) tok/s")
VAL = re.compile(r"^val\s+(\d+)/\d+ \| loss ([0-9.]+)")


def run(binary, dtype, steps, log_freq, folder):
    cmd = [binary, "--config=examples/llama/configs/fortunes.toml",
           f"--training.steps={steps}", f"--metrics.log_freq={log_freq}",
           f"--metrics.eval_freq={steps // 3}", f"--model.compute_dtype={dtype}",
           f"--job.dump_folder={folder}", "--metrics.enable_tensorboard=false",
           "--sample.max_new_tokens=0", "--training.time_limit_seconds=0"]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{dtype} run failed (rc {p.returncode}):\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    train, val, tps = {}, {}, {}
    for line in p.stdout.splitlines():
        m = STEP.match(line)
        if m:
            train[int(m[1])] = float(m[2])
            tps[int(m[1])] = float(m[3].replace(",", ""))
        m = VAL.match(line)
        if m:
            val[int(m[1])] = float(m[2])
    return train, val, tps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(REPO, "bazel-bin/examples/llama/llama"))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--log-freq", type=int, default=10)
    ap.add_argument("--tol", type=float, default=0.05, help="max |bf16 - f32| logged loss")
    ap.add_argument("--skip", type=int, default=0, help="steps not checked against --tol")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="graft-bf16-curve-")
    curves = {}
    for dtype in ("float32", "bfloat16"):
        print(f"running {dtype} ...", flush=True)
        curves[dtype] = run(args.binary, dtype, args.steps, args.log_freq,
                            os.path.join(tmp, dtype))
    (ft, fv, ftps), (bt, bv, btps) = curves["float32"], curves["bfloat16"]
    print(f"\nmain job config, {args.steps} steps, logged every {args.log_freq}: training "
          "loss (mean over the interval) and validation loss\n")
    print("| step | f32 | bf16 | bf16 - f32 |")
    print("| --- | --- | --- | --- |")
    worst = 0.0
    for s in sorted(set(ft) & set(bt)):
        d = bt[s] - ft[s]
        if s > args.skip:
            worst = max(worst, abs(d))
        print(f"| {s} | {ft[s]:.4f} | {bt[s]:.4f} | {d:+.4f} |")
    for s in sorted(set(fv) & set(bv)):
        print(f"| val {s} | {fv[s]:.4f} | {bv[s]:.4f} | {bv[s] - fv[s]:+.4f} |")
    late = [s for s in ft if s > args.steps // 2]
    if late and all(s in btps for s in late):
        f, b = statistics.median(ftps[s] for s in late), statistics.median(btps[s] for s in late)
        print(f"\ntokens/s (median of the logged intervals after step {args.steps // 2}): "
              f"f32 {f:,.0f}, bf16 {b:,.0f} ({b / f:.2f}x)")
    print(f"max |bf16 - f32| of the logged training loss after step {args.skip}: {worst:.4f} "
          f"(tolerance {args.tol})")
    sys.exit(0 if worst <= args.tol else 1)


if __name__ == "__main__":
    main()
