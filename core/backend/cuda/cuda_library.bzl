"""cuda_library: a cc_library of the CUDA backend, built only with --config=cuda.

Under --config=cuda (//core/backend/cuda:enabled) it has `srcs`, `hdrs` and `deps` +
`cuda_deps`; in any other build it is empty but for `deps` (so a CPU build never reads
/usr/local/cuda and needs no CUDA headers). It replaces the select({CUDA: [...],
"//conditions:default": []}) written out for each of them."""

CUDA = "//core/backend/cuda:enabled"

def _when_cuda(items):
    return select({
        CUDA: items,
        "//conditions:default": [],
    })

def cuda_library(name, srcs = [], hdrs = [], deps = [], cuda_deps = [], **kwargs):
    native.cc_library(
        name = name,
        srcs = _when_cuda(srcs),
        hdrs = _when_cuda(hdrs),
        deps = deps + _when_cuda(cuda_deps),
        **kwargs
    )
