#!/usr/bin/env python3
"""Writes tests/checkpoint/testdata/from_python.safetensors with the `safetensors` package
(safetensors.numpy.save_file), so graft's reader is tested on a file it did not write.
Element i of each tensor follows the formulas checked in tests/checkpoint/safetensors_test.cc.
"""
import os

import ml_dtypes
import numpy as np
import safetensors
from safetensors.numpy import save_file

i = lambda n: np.arange(n, dtype=np.float64)
tensors = {
    "model.embed_tokens.weight": (i(12) * 0.5 - 3).astype(np.float32).reshape(3, 4),
    "model.layers.0.mlp.up_proj.weight": (i(6) - 2).astype(ml_dtypes.bfloat16).reshape(2, 3),
    "h": (i(4) * 0.25).astype(np.float16),
    "d": i(3) / 3,
    "ids": (i(5) * 3 - 7).astype(np.int64),
    "n": np.array(-5, np.int32),
    "b": np.arange(3) % 2 == 0,
    "u": np.arange(4, dtype=np.uint8) * 60,
}
out = os.path.join(os.path.dirname(__file__), "..", "tests", "checkpoint", "testdata",
                   "from_python.safetensors")
save_file(tensors, out, metadata={"format": "pt",
                                  "generator": f"safetensors {safetensors.__version__}, "
                                               f"numpy {np.__version__}"})
print("wrote", out)
