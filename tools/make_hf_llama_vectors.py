#!/usr/bin/env python3
"""Logits of graft-exported Hugging Face Llama folders, computed by transformers
(tests/examples/llama/hf_export_test.cc checks graft's forward pass against them).

The folders are tests/examples/llama/testdata/hf_tiny and hf_tiny_tied, written by graft's
exporter (`bazel run //tests/examples/llama:write_hf_tiny -- $PWD/tests/examples/llama/testdata`;
the models are described in tests/examples/llama/hf_tiny.h; hf_tiny_tied is written in
shards with model.safetensors.index.json). Each is loaded exactly as a user
would, with `AutoModelForCausalLM.from_pretrained(folder)` in float32 (eager attention, so
the reference is transformers' plain Llama code), and must load with no missing or
unexpected weights and with the config values hf_tiny.h states. The logits of three fixed
token sequences (numpy RandomState(0), 16 tokens each, ids in [0, 96)) are recorded.

Recorded in tests/examples/llama/testdata/hf_tiny_logits.json (tests/util/test_vectors.h
format), per folder NAME: NAME/tokens (int32 [3, 16]) and NAME/logits (float32 [3, 16, 96]);
"meta" names the transformers, torch and numpy versions that made them.

  python3 tools/make_hf_llama_vectors.py

Made with transformers 5.25.0, torch 2.15.0 (CPU), numpy 2.4.6, Python 3.11.7.
"""
import json
import os
import platform

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "examples",
                    "llama", "testdata")

# What hf_tiny.h says each folder is: a config read wrong would show here first.
EXPECTED = {
    "hf_tiny": dict(vocab_size=96, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, intermediate_size=128, head_dim=16,
                    rms_norm_eps=1e-3, tie_word_embeddings=False, rope_theta=500.0),
    "hf_tiny_tied": dict(vocab_size=96, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=1, intermediate_size=64,
                         head_dim=8, rms_norm_eps=1e-4, tie_word_embeddings=True,
                         rope_theta=2000.0),
}


def rope_theta(config):
    params = getattr(config, "rope_parameters", None)  # transformers 5
    if params:
        assert params.get("rope_type", "default") == "default", params
        return params["rope_theta"]
    return config.rope_theta  # transformers 4


# Which folders are sharded (an index and no model.safetensors) and which are one file.
SHARDED = {"hf_tiny": False, "hf_tiny_tied": True}


def record(name, tokens):
    folder = os.path.join(HERE, name)
    assert os.path.exists(os.path.join(folder, "model.safetensors.index.json")) == SHARDED[name]
    assert os.path.exists(os.path.join(folder, "model.safetensors")) != SHARDED[name]
    model, info = AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    for kind in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        assert not info.get(kind), (name, kind, info[kind])
    assert type(model).__name__ == "LlamaForCausalLM", type(model)
    cfg = model.config
    for key, want in EXPECTED[name].items():
        got = rope_theta(cfg) if key == "rope_theta" else getattr(cfg, key)
        assert got == want, (name, key, got, want)
    if cfg.tie_word_embeddings:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor(tokens, dtype=torch.long)).logits.float().numpy()
    return {
        name + "/tokens": {"dtype": "int32", "shape": list(tokens.shape),
                           "data": [int(v) for v in tokens.ravel()]},
        name + "/logits": {"dtype": "float32", "shape": list(logits.shape),
                           "data": [float(v) for v in logits.ravel()]},
    }


def main():
    torch.set_num_threads(1)
    tokens = np.random.RandomState(0).randint(0, 96, size=(3, 16)).astype(np.int32)
    arrays = {}
    for name in EXPECTED:
        arrays.update(record(name, tokens))
    meta = {
        "generator": "tools/make_hf_llama_vectors.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "load": "AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, "
                "attn_implementation='eager')",
    }
    out = os.path.join(HERE, "hf_tiny_logits.json")
    with open(out, "w") as f:
        json.dump({"meta": meta, "arrays": arrays}, f)
        f.write("\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
