"""cuda_test: a test of the CUDA backend. It compiles in every build: with --config=cuda it
gets -DGRAFT_CUDA and `cuda_deps`; without, it is a test whose GPU cases skip ("built without
CUDA"). Tagged "gpu" unless `gpu = False` (tests that need no device: emitters, NVRTC)."""

def cuda_test(name, srcs = None, deps = [], cuda_deps = [], gpu = True, **kwargs):
    native.cc_test(
        name = name,
        srcs = srcs or [name + ".cc"],
        copts = select({
            "//core/backend/cuda:enabled": ["-DGRAFT_CUDA"],
            "//conditions:default": [],
        }),
        tags = (["gpu"] if gpu else []) + kwargs.pop("tags", []),
        deps = deps + ["@system_libs//:gtest_main"] + select({
            "//core/backend/cuda:enabled": cuda_deps,
            "//conditions:default": [],
        }),
        **kwargs
    )
