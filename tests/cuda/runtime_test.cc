// The CUDA runtime layer: the caching allocator (reuse, accounting, out of memory, errors
// without a GPU), host <-> device copies, streams, events and DeviceGuard. GPU tests skip
// without a device; NoDeviceThrowsCudaError runs only where there is none.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/backend/cuda/device.h"

#ifdef GRAFT_CUDA
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/buffer.h"
#include "core/error.h"
#include "tests/cuda/gpu_skip.h"
#endif

namespace graft::cuda {
namespace {

#ifndef GRAFT_CUDA
TEST(CudaRuntime, Skipped) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#else

// Runs `f`, expecting a graft::Error whose message starts with "[cuda]" (not an AllocError).
template <typename F>
void expect_cuda_error(F&& f, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error";
  } catch (const AllocError& e) {
    ADD_FAILURE() << what << ": AllocError instead of a CUDA error: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda]", 0), 0u) << what << ": " << e.what();
  }
}

TEST(CudaRuntime, NoDeviceThrowsCudaError) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present (" << status() << ")";
  expect_cuda_error([] { allocate_raw(0, 16); }, "allocate_raw");
  expect_cuda_error([] { allocate_buffer(0, 16, "x"); }, "allocate_buffer");
  expect_cuda_error([] { cached_bytes(0); }, "cached_bytes");
  expect_cuda_error([] { bytes_in_use(0); }, "bytes_in_use");
  expect_cuda_error([] { release_cached(0); }, "release_cached");
  expect_cuda_error([] { compute_stream(0); }, "compute_stream");
  expect_cuda_error([] { Stream s(0); }, "Stream");
  expect_cuda_error([] { DeviceGuard g(0); }, "DeviceGuard");
  // Even an impossible size: the missing device is reported, not the size.
  expect_cuda_error([] { allocate_raw(0, size_t{1} << 63); }, "allocate_raw(huge)");
}

TEST(CudaRuntime, SizeClasses) {
  EXPECT_EQ(rounded_size(0), 512u);
  EXPECT_EQ(rounded_size(1), 512u);
  EXPECT_EQ(rounded_size(513), 1024u);
  EXPECT_EQ(rounded_size(1 << 20), size_t{1} << 20);
  EXPECT_EQ(rounded_size((1 << 20) + 1), size_t{2} << 20);
  EXPECT_EQ(rounded_size((5 << 20) + 3), size_t{6} << 20);
}

TEST(CudaRuntime, ReusesFreedBlock) {
  GRAFT_REQUIRE_GPUS(1);
  void* p = allocate_raw(0, 1000);
  ASSERT_NE(p, nullptr);
  free_raw(0, p, 1000);
  void* q = allocate_raw(0, 900);  // same 1024-byte class
  EXPECT_EQ(q, p);
  free_raw(0, q, 900);
  void* big = allocate_raw(0, 3 << 20);
  free_raw(0, big, 3 << 20);
  std::shared_ptr<Buffer> b = allocate_buffer(0, (3 << 20) + 100, "reuse");
  EXPECT_EQ(b->data(), big);  // both round to 4 MiB
  EXPECT_EQ(b->device(), 0);
  EXPECT_FALSE(b->on_host());
}

TEST(CudaRuntime, Accounting) {
  GRAFT_REQUIRE_GPUS(1);
  release_cached(0);
  EXPECT_EQ(cached_bytes(0), 0u);
  const size_t base = bytes_in_use(0);
  {
    auto a = allocate_buffer(0, 3 << 20, "a");  // 4 MiB class
    auto b = allocate_buffer(0, 100, "b");      // 512 B class
    EXPECT_EQ(bytes_in_use(0), base + (4 << 20) + 512);
    EXPECT_EQ(cached_bytes(0), 0u);
  }
  EXPECT_EQ(bytes_in_use(0), base);
  EXPECT_EQ(cached_bytes(0), size_t{4 << 20} + 512);
  release_cached(0);
  EXPECT_EQ(cached_bytes(0), 0u);
  EXPECT_EQ(bytes_in_use(0), base);
}

TEST(CudaRuntime, ImpossibleRequestIsAllocError) {
  GRAFT_REQUIRE_GPUS(1);
  const size_t base = bytes_in_use(0);
  EXPECT_THROW(allocate_raw(0, size_t{1} << 52), AllocError);  // 4 PiB
  try {
    allocate_buffer(0, size_t{1} << 63, "huge f32[...]");
    ADD_FAILURE() << "no error";
  } catch (const AllocError& e) {
    EXPECT_NE(std::string(e.what()).find("huge f32[...]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bytes_in_use(0), base);
  // The allocator still works after running out.
  auto ok = allocate_buffer(0, 1024);
  EXPECT_NE(ok->data(), nullptr);
}

TEST(CudaRuntime, BadDeviceIsCudaError) {
  GRAFT_REQUIRE_GPUS(1);
  expect_cuda_error([] { allocate_raw(device_count(), 16); }, "allocate_raw(bad device)");
  expect_cuda_error([] { allocate_raw(-1, 16); }, "allocate_raw(-1)");
}

TEST(CudaRuntime, CopiesRoundTrip) {
  GRAFT_REQUIRE_GPUS(1);
  std::vector<float> host(100000), back(host.size(), -1.0f);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const size_t bytes = host.size() * sizeof(float);
  auto d = allocate_buffer(0, bytes);
  cudaStream_t s = compute_stream(0);
  copy_to_device_sync(0, d->data(), host.data(), bytes, s);
  copy_to_host_sync(0, back.data(), d->data(), bytes, s);
  EXPECT_EQ(std::memcmp(host.data(), back.data(), bytes), 0);

  // Async copies on a stream of its own, ordered by an event.
  Stream other(0);
  auto d2 = allocate_buffer(0, bytes);
  std::vector<float> back2(host.size(), 0.0f);
  copy_to_device(0, d2->data(), host.data(), bytes, other.get());
  Event copied(0);
  copied.record(other.get());
  other.wait(copied.get());
  copy_to_host(0, back2.data(), d2->data(), bytes, other.get());
  other.synchronize();
  EXPECT_TRUE(copied.done());
  EXPECT_EQ(std::memcmp(host.data(), back2.data(), bytes), 0);
}

TEST(CudaRuntime, ComputeStreamIsStable) {
  GRAFT_REQUIRE_GPUS(1);
  cudaStream_t a = compute_stream(0);
  std::vector<cudaStream_t> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { seen[t] = compute_stream(0); });
  for (auto& t : threads) t.join();
  for (cudaStream_t s : seen) EXPECT_EQ(s, a);
}

TEST(CudaRuntime, DeviceGuardRestores) {
  GRAFT_REQUIRE_GPUS(1);
  int before = -1, after = -1;
  ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  {
    DeviceGuard g(device_count() - 1);
    int inside = -1;
    ASSERT_EQ(cudaGetDevice(&inside), cudaSuccess);
    EXPECT_EQ(inside, device_count() - 1);
  }
  ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
  EXPECT_EQ(after, before);
}

TEST(CudaRuntime, ConcurrentAllocations) {
  GRAFT_REQUIRE_GPUS(1);
  const size_t base = bytes_in_use(0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = size_t(512) * (1 + (i * 7 + t) % 64);
        auto b = allocate_buffer(0, bytes);
        ASSERT_NE(b->data(), nullptr);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bytes_in_use(0), base);
}

TEST(CudaRuntime, EventTiming) {
  GRAFT_REQUIRE_GPUS(1);
  Stream s(0);
  Event start(0, true), stop(0, true);
  auto d = allocate_buffer(0, 1 << 20);
  start.record(s.get());
  ASSERT_EQ(cudaMemsetAsync(d->data(), 0, 1 << 20, s.get()), cudaSuccess);
  stop.record(s.get());
  stop.synchronize();
  EXPECT_GE(stop.elapsed_ms(start), 0.0f);
}
#endif  // GRAFT_CUDA

}  // namespace
}  // namespace graft::cuda
