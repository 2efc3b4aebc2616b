// How a GPU test gates on its GPUs: GRAFT_REQUIRE_GPUS(n) as a test's first statement runs it
// with n or more devices, and otherwise skips it saying why (built without CUDA, no device,
// fewer than n, or a CUDA driver error on a machine where no GPU is expected), naming the CUDA
// error. On a machine where a GPU is expected (GRAFT_EXPECT_GPU=1, which tools/gpu_check.sh
// sets, or /dev/nvidia0) a driver error fails the test instead of skipping it
// (core/backend/cuda/probe.h's require_gpus). The GRAFT_CUDA parts build with the including
// test's copts (cuda_test.bzl).
#pragma once

#include "gtest/gtest.h"
#ifdef GRAFT_CUDA
#include "core/backend/cuda/device.h"

#define GRAFT_REQUIRE_GPUS(n)                                                              \
  if (const ::graft::cuda::GpuRequirement graft_gpus_ = ::graft::cuda::require_gpus(       \
          ::graft::cuda::probe(), (n), ::graft::cuda::gpu_expected());                     \
      graft_gpus_.verdict == ::graft::cuda::GpuVerdict::kRun) {                             \
  } else if (graft_gpus_.verdict == ::graft::cuda::GpuVerdict::kFail)                      \
    GTEST_FAIL() << graft_gpus_.reason;                                                    \
  else                                                                                     \
    GTEST_SKIP() << graft_gpus_.reason
#else
#define GRAFT_REQUIRE_GPUS(n) GTEST_SKIP() << "built without CUDA (--config=cuda)"
#endif
