"""Builds .cu files with nvcc in a genrule (Bazel 4 has no CUDA rules and nothing can be
downloaded). Only built under --config=cuda: elsewhere these targets are incompatible, so a
machine without the CUDA toolkit never runs nvcc."""

def cuda_only():
    """`target_compatible_with` for a target that exists only in a CUDA build: without
    --config=cuda it requires a constraint no platform has (//third_party:cuda_build), so
    `bazel build //...` skips it instead of building it."""
    return select({
        "//core/backend/cuda:enabled": [],
        "//conditions:default": ["//third_party:cuda_build"],
    })

def cuda_object(name, src, hdrs = [], arch = "sm_90"):
    """Compiles `src` to `<name>.o` with nvcc; add the output to a cc_library's srcs (inside a
    select on //core/backend/cuda:enabled, as every user here does)."""
    native.genrule(
        name = name,
        srcs = [src] + hdrs,
        outs = [name + ".o"],
        cmd = ("/usr/local/cuda/bin/nvcc -std=c++20 -O2 -arch=" + arch +
               " -Xcompiler -fPIC -I. -c $(location " + src + ") -o $@"),
        target_compatible_with = cuda_only(),
    )
