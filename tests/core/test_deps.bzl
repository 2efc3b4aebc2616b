"""The dependencies core's tests link, shared by the BUILD files under tests/core."""

# A test of the ops on the CPU backend: graft, its transforms and jax.random, gtest's main.
CPU_TEST_DEPS = [
    "//core",
    "//core/backend/cpu",
    "//core/random",
    "//transforms",
    "@system_libs//:gtest_main",
]

# The same linked with the CUDA backend too (under --config=cuda; an empty target otherwise) and
# the ThreadSanitizer suppressions, for the tests CI also runs with --config=cuda or tsan.
ALL_BACKENDS_TEST_DEPS = CPU_TEST_DEPS + [
    "//core/backend/cuda",
    "//tests/util:tsan_suppressions",
]
