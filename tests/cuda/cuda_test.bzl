"""cuda_test: a test of the CUDA backend. With --config=cuda it gets -DGRAFT_CUDA and
`cuda_deps`, and its GPU cases skip at run time when there is no device. A GPU test (`gpu`,
tagged "gpu") is incompatible with a build without CUDA, so `bazel test //...` there skips it
without building it; a test that needs no device (`gpu = False`: emitters, NVRTC, planning)
builds in every configuration, unless `cuda_build_only` (it reads what only a CUDA build has,
such as the kernel table, but no device)."""

def cuda_test(name, srcs = None, deps = [], cuda_deps = [], gpu = True, cuda_build_only = False, **kwargs):
    native.cc_test(
        name = name,
        srcs = srcs or [name + ".cc"],
        copts = select({
            "//core/backend/cuda:enabled": ["-DGRAFT_CUDA"],
            "//conditions:default": [],
        }),
        tags = (["gpu"] if gpu else []) + kwargs.pop("tags", []),
        target_compatible_with = select({
            "//core/backend/cuda:enabled": [],
            "//conditions:default": ["//third_party:cuda_build"] if (gpu or cuda_build_only) else [],
        }),
        deps = deps + ["@system_libs//:gtest_main", "//tests/cuda:gpu_skip"] + select({
            "//core/backend/cuda:enabled": cuda_deps,
            "//conditions:default": [],
        }),
        **kwargs
    )
