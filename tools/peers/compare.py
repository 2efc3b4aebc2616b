#!/usr/bin/env python3
"""graft's train step against the same Llama step in PyTorch (eager and torch.compile), JAX
and MLX, on one machine in one run, alternating (graft, torch-eager, torch-compile, jax, mlx,
graft, ...) so that drifting load hits all of them. Every run is a fresh subprocess that starts
from the same numpy weights and tokens (common.py); graft reads them from a safetensors file
(bench/peer_step.cc). Prints a markdown table: tokens/s (median over rounds), ratio vs graft,
and the step-0 and step-2 losses (which must agree: same weights, same tokens, same math).

    python3 tools/peers/compare.py --config llama-small [--rounds 2] [--build]
    python3 tools/peers/compare.py --config llama-tiny --parity 1e-4   # exit 1 on a mismatch

Needs only the standard library itself; the peers run under --python (default: the
interpreter of ~/.cache/graft-peers/venv when it exists, else this one). A peer whose package
is not importable there is skipped (and listed as such). See README.md for the installs.
"""
import argparse
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_VENV_PY = os.path.expanduser("~/.cache/graft-peers/venv/bin/python")
DEFAULT_OPENBLAS = os.path.join(
    HERE, ".cache", "openblas", "usr", "lib", "x86_64-linux-gnu", "openblas-pthread",
    "libopenblas.so.0")
DEFAULT_GRAFT = os.path.join(REPO, "bazel-out", "k8-opt", "bin", "bench", "peer_step")

# name -> (module to import for the check, the version expression, the script, extra args)
PEERS = {
    "torch-eager": ("torch", "torch.__version__", "torch_llama.py", []),
    "torch-compile": ("torch", "torch.__version__", "torch_llama.py", ["--compile"]),
    "jax": ("jax", "jax.__version__ + ' (optax ' + __import__('optax').__version__ + ')'",
            "jax_llama.py", []),
    "mlx": ("mlx.core", "mlx.core.__version__", "mlx_llama.py", []),
    # Mixed precision: bf16 matmuls with f32 params (torch: CPU autocast(bfloat16)).
    "torch-eager-bf16": ("torch", "torch.__version__", "torch_llama.py", ["--bf16"]),
    "torch-compile-bf16": ("torch", "torch.__version__", "torch_llama.py",
                           ["--compile", "--bf16"]),
}
F32 = ["graft", "torch-eager", "torch-compile", "jax", "mlx"]  # the default set
ALL = F32 + ["graft-bf16", "torch-eager-bf16", "torch-compile-bf16"]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(l for l in f if l.startswith("flags")).split(":", 1)[1].split()
    except (OSError, StopIteration):
        return ""
    keep = [x for x in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if x in flags]
    return ", ".join(keep)


def graft_revision():
    try:
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def peer_version(python, module, expr):
    code = f"import {module}; print({expr})"
    if module == "mlx.core":
        code = "import mlx.core; print(mlx.core.__version__)"
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return None, last
    return r.stdout.strip().splitlines()[-1], ""


def parse_result(text):
    """The RESULT line's key=value fields, plus the free-text NOTE line's as "note"."""
    res, note = None, None
    for line in text.splitlines():
        if line.startswith("RESULT "):
            res = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        elif line.startswith("NOTE "):
            note = line[len("NOTE "):].strip()
    if res is not None and note:
        res["note"] = note
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="llama-small",
                    choices=["llama-tiny", "llama-small", "moe-small", "moe-tiny"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per run")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--only", default=",".join(F32),
                    help=f"comma-separated subset of {','.join(ALL)}")
    ap.add_argument("--python", default=os.environ.get("GRAFT_PEERS_PYTHON") or (
        DEFAULT_VENV_PY if os.path.exists(DEFAULT_VENV_PY) else sys.executable),
        help="interpreter of the peers (default: ~/.cache/graft-peers/venv if present)")
    ap.add_argument("--openblas", default=DEFAULT_OPENBLAS,
                    help="libopenblas.so.0 to LD_PRELOAD for MLX (used when it exists)")
    ap.add_argument("--graft-bin", default=DEFAULT_GRAFT, help="bench/peer_step binary")
    ap.add_argument("--build", action="store_true",
                    help="bazel build -c opt //bench:peer_step first")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    ap.add_argument("--parity", type=float, default=None, metavar="REL",
                    help="exit 1 when a step-0 / step-2 loss differs from graft's by more")
    ap.add_argument("--log-dir", default=None, help="keep every run's output here")
    args = ap.parse_args()

    chosen = [f for f in args.only.split(",") if f]
    for f in chosen:
        if f not in ALL:
            raise SystemExit(f"unknown framework {f!r}; one of {', '.join(ALL)}")

    if args.build:
        subprocess.run(["bazel", "build", "-c", "opt", "//bench:peer_step"], cwd=REPO, check=True)

    versions, skipped = {}, {}
    for f in chosen:
        if f in ("graft", "graft-bf16"):
            if os.path.exists(args.graft_bin):
                versions[f] = graft_revision()
            else:
                skipped[f] = f"{args.graft_bin} missing (bazel build -c opt //bench:peer_step)"
            continue
        module, expr = PEERS[f][0], PEERS[f][1]
        v, err = peer_version(args.python, module, expr)
        if v is None:
            skipped[f] = f"not installed for {args.python} ({err})"
        else:
            versions[f] = v
    frameworks = [f for f in chosen if f in versions]
    for f, why in skipped.items():
        print(f"skipping {f}: {why}", flush=True)
    if not frameworks:
        raise SystemExit("nothing to run")

    tmp = tempfile.mkdtemp(prefix="graft-peers-")
    weights = os.path.join(tmp, f"{args.config}.safetensors")
    if "graft" in frameworks or "graft-bf16" in frameworks:
        subprocess.run([args.python, os.path.join(HERE, "common.py"), "--export", weights,
                        "--config", args.config, "--steps", str(args.warmup + args.steps)],
                       check=True)
    log_dir = args.log_dir or tmp
    os.makedirs(log_dir, exist_ok=True)

    runs = {f: [] for f in frameworks}
    notes, failures = {}, {}
    for r in range(args.rounds):
        for f in frameworks:
            env = dict(os.environ)
            if f in ("graft", "graft-bf16"):
                cmd = [args.graft_bin, weights, "--steps", str(args.steps),
                       "--warmup", str(args.warmup)] + (["--bf16"] if f == "graft-bf16" else [])
            else:
                script, extra = PEERS[f][2], PEERS[f][3]
                cmd = [args.python, os.path.join(HERE, script), "--config", args.config,
                       "--steps", str(args.steps), "--warmup", str(args.warmup)] + extra
                if f == "mlx" and args.openblas and os.path.exists(args.openblas):
                    env["LD_PRELOAD"] = (args.openblas + " " + env.get("LD_PRELOAD", "")).strip()
            t0 = time.time()
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                   timeout=args.timeout)
                out, rc = p.stdout + p.stderr, p.returncode
            except subprocess.TimeoutExpired as e:
                out = e.stdout or ""
                out, rc = out.decode(errors="replace") if isinstance(out, bytes) else out, "timeout"
            log = os.path.join(log_dir, f"{f}.round{r}.log")
            with open(log, "w") as fh:
                fh.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + out)
            res = parse_result(out) if rc == 0 else None
            if res is None:
                failures[f] = f"rc {rc}, see {log}"
                print(f"round {r} {f}: FAILED (rc {rc}); log {log}", flush=True)
                continue
            runs[f].append(res)
            if "note" in res:
                notes[f] = res["note"]
            print(f"round {r} {f}: {float(res['tokens_per_s']):.1f} tokens/s, "
                  f"loss0 {res['loss0']}, loss2 {res['loss2']} ({time.time() - t0:.0f} s)",
                  flush=True)

    tps = {f: statistics.median(float(x["tokens_per_s"]) for x in v) for f, v in runs.items() if v}
    loss = {f: (float(v[0]["loss0"]), float(v[0]["loss2"])) for f, v in runs.items() if v}
    base = tps.get("graft")
    print()
    precision = "f32" + (" (-bf16 rows: bf16 matmuls, f32 params)" if any(
        f.endswith("-bf16") for f in frameworks) else "")
    print(f"{args.config}, {precision}, median tokens/s over {args.rounds} alternating rounds of "
          f"{args.warmup} warm-up + median of {args.steps} timed steps; "
          f"{cpu_model()} ({os.cpu_count()} cores; {cpu_flags()}), "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    print("versions: " + "; ".join(f"{f} {versions[f]}" for f in frameworks))
    print()
    print("| framework | tokens/s | vs graft | loss step 0 | loss step 2 | max rel. loss diff "
          "vs graft | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    bad = []
    for f in frameworks:
        if f not in tps:
            print(f"| {f} | failed | | | | | {failures.get(f, '')} |")
            bad.append(f)
            continue
        ratio = f"{tps[f] / base:.2f}" if base else "n/a"
        l0, l2 = loss[f]
        diff = ""
        if "graft" in loss:
            g0, g2 = loss["graft"]
            rel = max(abs(l0 - g0) / abs(g0), abs(l2 - g2) / abs(g2))
            diff = f"{rel:.1e}"
            if args.parity is not None and rel > args.parity and not f.endswith("-bf16"):
                bad.append(f)
        print(f"| {f} | {tps[f]:.1f} | {ratio} | {l0:.7g} | {l2:.7g} | {diff} | "
              f"{notes.get(f, '')} |")
    for f, why in skipped.items():
        print(f"| {f} | skipped | | | | | {why} |")
    print(f"\nlogs: {log_dir}")
    if args.parity is not None:
        if bad:
            print(f"parity: FAILED for {', '.join(bad)} (relative tolerance {args.parity})")
            sys.exit(1)
        print(f"parity: step-0 and step-2 losses agree with graft within {args.parity} relative")


if __name__ == "__main__":
    main()
