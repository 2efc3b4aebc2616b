#!/usr/bin/env python3
"""Record JAX's Monte Carlo estimate of pi for examples/basics (examples/monte_carlo_pi.h).

Runs JAX 0.10.2 on CPU (default flags: x64 off, jax_threefry_partitionable=True) on the same
computation as graft's monte_carlo_pi(key, n): key = jax.random.PRNGKey(0), split into 4, the
first subkey draws n points uniform in the unit square (f32 [n, 2]), and pi is 4 times the
f32 mean of sum(xy^2, 1) <= 1. Writes tests/examples/basics/testdata/pi_vectors.txt, read by
tests/examples/basics/monte_carlo_pi_test.cc: one line per n, "<n> <inside count> <pi as an
f32 bit pattern in hex> <pi with 9 significant digits>".

Usage: python3 tools/make_basics_pi_vectors.py
"""

import os
import struct

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "examples", "basics", "testdata", "pi_vectors.txt")

# The example's n (2^22), and a small n the test also runs quickly under sanitizers.
SIZES = [1 << 22, 1000]


def monte_carlo_pi(key, n):
  subkey = jax.random.split(key, 4)[0]
  xy = jax.random.uniform(subkey, (n, 2))
  inside = jnp.sum(jnp.square(xy), 1) <= 1.0
  return jnp.sum(inside), 4.0 * jnp.mean(inside.astype(jnp.float32))


def main():
  lines = [
      "# JAX's Monte Carlo pi for graft's examples/basics (tests/examples/basics).",
      f"# Written by tools/make_basics_pi_vectors.py with JAX {jax.__version__} on "
      f"{jax.default_backend()} (x64 off). <n> <inside> <pi f32 bits> <pi>",
  ]
  for n in SIZES:
    count, pi = monte_carlo_pi(jax.random.PRNGKey(0), n)
    bits = struct.unpack("<I", struct.pack("<f", float(pi)))[0]
    lines.append(f"{n} {int(count)} 0x{bits:08x} {float(pi):.9g}")
  os.makedirs(os.path.dirname(OUT), exist_ok=True)
  with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
  print("\n".join(lines))


if __name__ == "__main__":
  main()
