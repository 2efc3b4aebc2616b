"""Builds .cu files with nvcc in a genrule (Bazel 4 has no CUDA rules and nothing can be
downloaded). Only used under --config=cuda."""

def cuda_object(name, src, hdrs = [], arch = "sm_90"):
    """Compiles `src` to `<name>.o` with nvcc; add the output to a cc_library's srcs."""
    native.genrule(
        name = name,
        srcs = [src] + hdrs,
        outs = [name + ".o"],
        cmd = ("/usr/local/cuda/bin/nvcc -std=c++20 -O2 -arch=" + arch +
               " -Xcompiler -fPIC -I. -c $(location " + src + ") -o $@"),
    )
