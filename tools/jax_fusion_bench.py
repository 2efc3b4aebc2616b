#!/usr/bin/env python3
"""The two 8-op elementwise chains of bench/fusion_bench.cc in JAX (XLA generates one fused
loop per chain), for comparing against `bazel run -c opt //bench:fusion_bench` on the same
machine (run them one after the other, not at once). 64 MiB of f32, median of 9 calls.

XLA allocates a fresh output on every call, so a call pays first-touch page faults for 64
MiB; the donated variant (donate_argnums=0, a fresh input each call, not timed) writes in
place, as graft's buffer cache lets it write into a reused block.

    pip install jax && python3 tools/jax_fusion_bench.py
"""
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

N = (64 << 20) // 4


def chain(x):  # mul tanh mul neg exp sub max mul
    a = jnp.tanh(x * 1.5)
    b = jnp.exp(-(a * x))
    return jnp.maximum(b - a, x) * x


def arithmetic_chain(x):  # mul add mul neg sub max mul add
    a = x * 1.5 + 0.5
    b = -(a * x)
    return jnp.maximum(b - a, x) * x + a


def median_ms(run, prepare=lambda: None, repeats=9):
    times = []
    for _ in range(repeats + 1):  # the first is a warm-up
        arg = prepare()
        start = time.perf_counter()
        run(arg).block_until_ready()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[1:])


def main():
    host = ((np.arange(N) % 2001) - 1000).astype(np.float32) * 1e-3
    x = jnp.asarray(host)
    dst = np.empty_like(host)
    copy = statistics.median(
        [(lambda s: (np.copyto(dst, host), time.perf_counter() - s)[1])(time.perf_counter())
         for _ in range(9)]) * 1e3
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}, {N} f32 (64 MiB); "
          f"numpy copyto of the same bytes {copy:.2f} ms")
    for name, fn in [("8-op chain (mul tanh mul neg exp sub max mul)", chain),
                     ("8-op chain without tanh / exp", arithmetic_chain)]:
        fresh = median_ms(jax.jit(fn), prepare=lambda: x)
        donated = jax.jit(fn, donate_argnums=0)
        inplace = median_ms(donated, prepare=lambda: jnp.asarray(host).block_until_ready())
        print(f"{name}:\n  jit, fresh output   {fresh:8.2f} ms\n"
              f"  jit, donated input  {inplace:8.2f} ms   = {inplace / copy:.2f}x copyto")


if __name__ == "__main__":
    main()
