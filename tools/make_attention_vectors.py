#!/usr/bin/env python3
"""Reference vectors for graft::nn::dot_product_attention, recorded by running JAX.

Runs jax.nn.dot_product_attention (implementation=None, i.e. XLA, on JAX's CPU backend, f32,
x64 off) and writes tests/nn/testdata/dot_product_attention_vectors.json in the format of
tests/util/test_vectors.h. For each case <c> in CASES:
  * <c>/q, <c>/k, <c>/v (and <c>/bias, <c>/mask as int32 0/1, <c>/q_len, <c>/kv_len when the
    case uses them): the inputs, drawn from numpy.random.RandomState(seed);
  * <c>/w: a weight of the output's shape;
  * <c>/out: dot_product_attention(...);
  * <c>/dq, <c>/dk, <c>/dv (and <c>/dbias): jax.grad of sum(out * w) with respect to each.

Usage: ~/.cache/graft-peers/venv/bin/python tools/make_attention_vectors.py
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "nn", "testdata",
                   "dot_product_attention_vectors.json")

# name: (B, T, S, N, K, H, options); B None = unbatched [T, N, H] inputs.
CASES = {
    "gqa": (2, 3, 5, 4, 2, 8, {}),
    "bias_mask_scale": (2, 3, 5, 4, 2, 4, {"bias": (2, 1, 3, 5), "mask": (1, 4, 3, 5),
                                          "scale": 0.3}),
    "bias_per_head": (1, 4, 4, 2, 1, 4, {"bias": (1, 2, 4, 4)}),
    "causal_square": (2, 4, 4, 2, 2, 4, {"is_causal": True}),
    "causal_rect_gqa": (1, 3, 5, 4, 1, 4, {"is_causal": True}),
    "seq_lengths": (2, 4, 5, 2, 1, 4, {"q_len": [3, 1], "kv_len": [2, 5]}),
    "causal_kv_len_mask": (2, 4, 4, 2, 2, 4, {"is_causal": True, "kv_len": [4, 2],
                                              "mask": (2, 1, 4, 4)}),
    "unbatched": (None, 3, 4, 2, 2, 4, {}),
}


def record(arrays, name, x):
  x = np.asarray(x)
  arrays[name] = {"dtype": str(x.dtype), "shape": list(x.shape), "data": x.reshape(-1).tolist()}


def main():
  arrays = {}
  for seed, (name, (B, T, S, N, K, H, o)) in enumerate(CASES.items()):
    rng = np.random.RandomState(seed)
    lead = () if B is None else (B,)
    q = rng.randn(*lead, T, N, H).astype(np.float32)
    k = rng.randn(*lead, S, K, H).astype(np.float32)
    v = rng.randn(*lead, S, K, H).astype(np.float32)
    w = rng.randn(*lead, T, N, H).astype(np.float32)
    bias = rng.randn(*o["bias"]).astype(np.float32) if "bias" in o else None
    mask = rng.rand(*o["mask"]) > 0.3 if "mask" in o else None
    q_len = np.array(o["q_len"], np.int32) if "q_len" in o else None
    kv_len = np.array(o["kv_len"], np.int32) if "kv_len" in o else None

    def f(q, k, v, bias):
      return jax.nn.dot_product_attention(
          q, k, v, bias=bias, mask=None if mask is None else jnp.asarray(mask),
          scale=o.get("scale"), is_causal=o.get("is_causal", False),
          query_seq_lengths=None if q_len is None else jnp.asarray(q_len),
          key_value_seq_lengths=None if kv_len is None else jnp.asarray(kv_len))

    out = f(q, k, v, bias)
    argnums = (0, 1, 2, 3) if bias is not None else (0, 1, 2)
    grads = jax.grad(lambda *a: jnp.sum(f(*a) * w), argnums=argnums)(q, k, v, bias)
    for key, x in [("q", q), ("k", k), ("v", v), ("w", w), ("out", out), ("dq", grads[0]),
                   ("dk", grads[1]), ("dv", grads[2])]:
      record(arrays, f"{name}/{key}", x)
    if bias is not None:
      record(arrays, f"{name}/bias", bias)
      record(arrays, f"{name}/dbias", grads[3])
    if mask is not None:
      record(arrays, f"{name}/mask", mask.astype(np.int32))
    if q_len is not None:
      record(arrays, f"{name}/q_len", q_len)
    if kv_len is not None:
      record(arrays, f"{name}/kv_len", kv_len)

  meta = {"generator": "tools/make_attention_vectors.py", "jax": jax.__version__,
          "numpy": np.__version__, "backend": jax.default_backend()}
  with open(OUT, "w") as f:
    json.dump({"meta": meta, "arrays": arrays}, f, indent=0)
  print(f"wrote {len(arrays)} arrays to {os.path.normpath(OUT)}")


if __name__ == "__main__":
  main()
