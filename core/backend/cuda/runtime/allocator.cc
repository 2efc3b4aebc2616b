#include "core/backend/cuda/runtime/allocator.h"

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

constexpr size_t kSmallLimit = size_t{1} << 20;  // up to here: 512 B classes
constexpr size_t kSmallClass = 512;
constexpr size_t kLargeClass = size_t{2} << 20;
// Beyond this no rounding is attempted (it would wrap); cudaMalloc cannot satisfy it anyway.
constexpr size_t kMaxRequest = size_t{1} << 62;

// One device's cache. Blocks are matched by exact size class: with the coarse classes above
// a training step's recurring shapes find their blocks again, and no block is ever split, so
// freeing needs no bookkeeping beyond the size the caller gives back.
struct DeviceCache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free;  // size class -> blocks
  size_t cached = 0, in_use = 0;
};

constexpr int kMaxDevices = 64;

// Leaked on purpose: buffers may die during static destruction, after which a destroyed
// cache could not take them back.
DeviceCache& cache(int device) {
  static std::array<std::atomic<DeviceCache*>, kMaxDevices> caches{};
  static std::mutex mu;
  DeviceCache* c = caches[device].load(std::memory_order_acquire);
  if (c == nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    c = caches[device].load(std::memory_order_relaxed);
    if (c == nullptr) {
      c = new DeviceCache;
      caches[device].store(c, std::memory_order_release);
    }
  }
  return *c;
}

// cudaFree of every cached block; the caller holds c.mu and has made the device current.
void free_cached_locked(DeviceCache& c) {
  if (c.cached == 0) return;
  // A block is cached as soon as its owner frees it, possibly while compute-stream kernels
  // still use it: let them finish before the memory goes back.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (auto& [size, blocks] : c.free) {
    for (void* p : blocks) check(cudaFree(p), "cudaFree");
  }
  c.free.clear();
  c.cached = 0;
}

void release_block(void* data, size_t bytes, int device) {
  try {
    free_raw(device, data, bytes);
  } catch (...) {
    // Buffer's release must not throw. free_raw only fails if the free list cannot grow
    // (std::bad_alloc): the block is then lost to the cache, which is harmless.
  }
}

}  // namespace

size_t rounded_size(size_t bytes) {
  if (bytes == 0) return kSmallClass;
  if (bytes > kMaxRequest) return bytes;
  if (bytes <= kSmallLimit) return (bytes + kSmallClass - 1) / kSmallClass * kSmallClass;
  return (bytes + kLargeClass - 1) / kLargeClass * kLargeClass;
}

namespace {

void* allocate(int device, size_t bytes, std::string_view what) {
  DeviceGuard guard(device);  // checks the device first: no GPU is "[cuda] ...", not AllocError
  if (bytes > kMaxRequest) throw AllocError(bytes, what);
  const size_t size = rounded_size(bytes);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.free.find(size);
  if (it != c.free.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    c.cached -= size;
    c.in_use += size;
    return p;
  }
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, size);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky, but clear it so later checks do not see it
    free_cached_locked(c);
    err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw AllocError(bytes, what);
    }
  }
  check(err, "cudaMalloc");
  c.in_use += size;
  return p;
}

}  // namespace

void* allocate_raw(int device, size_t bytes) {
  return allocate(device, bytes, str_cat("a block on CUDA device ", device));
}

void free_raw(int device, void* p, size_t bytes) {
  if (p == nullptr) return;
  if (device < 0 || device >= kMaxDevices) graft::fail("cuda", "free_raw: bad device ", device);
  const size_t size = rounded_size(bytes);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  c.free[size].push_back(p);
  c.cached += size;
  c.in_use -= size;
}

std::shared_ptr<Buffer> allocate_buffer(int device, size_t bytes, std::string_view what) {
  void* p = allocate(device, bytes, what.empty() ? std::string_view("a CUDA device buffer") : what);
  try {
    return std::make_shared<Buffer>(Buffer::DeviceMemory{p, bytes, device, &release_block});
  } catch (...) {
    free_raw(device, p, bytes);
    throw;
  }
}

size_t cached_bytes(int device) {
  check_device(device);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  return c.cached;
}

size_t bytes_in_use(int device) {
  check_device(device);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  return c.in_use;
}

void release_cached(int device) {
  DeviceGuard guard(device);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  free_cached_locked(c);
}

void copy_to_device(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync(H2D)");
}

void copy_to_host(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(D2H)");
}

void copy_to_device_sync(int device, void* dst, const void* src, size_t bytes,
                         cudaStream_t stream) {
  copy_to_device(device, dst, src, bytes, stream);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void copy_to_host_sync(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  copy_to_host(device, dst, src, bytes, stream);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

}  // namespace graft::cuda
