// How a GPU test skips cleanly: GRAFT_REQUIRE_GPUS(n) as a test's first statement skips it,
// saying why, in a build without CUDA (--config=cuda) or where fewer than n GPUs are visible.
// The GRAFT_CUDA parts build with the including test's copts (cuda_test.bzl).
#pragma once

#include "gtest/gtest.h"
#ifdef GRAFT_CUDA
#include "core/backend/cuda/device.h"

#define GRAFT_REQUIRE_GPUS(n)                                                               \
  if (::graft::cuda::device_count() < (n))                                                  \
  GTEST_SKIP() << "needs " << (n) << " GPU(s), there are " << ::graft::cuda::device_count() \
               << " (" << ::graft::cuda::status() << ")"
#else
#define GRAFT_REQUIRE_GPUS(n) GTEST_SKIP() << "built without CUDA (--config=cuda)"
#endif
