// A dense, 64-byte aligned host allocation. Owned through std::shared_ptr by evaluated nodes.
//
// Large allocations (>= 1 MiB) come from a size-keyed cache of freed blocks, so a program
// that allocates the same big arrays step after step (a jitted training step, an elementwise
// chain) reuses pages that are already mapped instead of paying the kernel's first-touch page
// faults (tens of ms per 64 MiB) each time. The cache holds at most a quarter of physical
// memory, at least 1 GiB (environment variable GRAFT_BUFFER_CACHE_MB overrides; 0 turns it
// off), evicts least recently freed
// blocks first, is emptied when an allocation fails (then retried) and at exit. Under
// AddressSanitizer cached blocks are poisoned, so using a freed buffer is still reported.
// Blocks of 8 MiB or more are 2 MiB-aligned, rounded to 2 MiB and marked for transparent huge
// pages (madvise; GRAFT_HUGE_PAGES=0, false, off or no turns this off): fewer TLB misses and
// page faults.
// GRAFT_POISON_BUFFERS=1 (read at the first allocation) fills every new buffer with 0xFF
// bytes, NaN as floats: a kernel reading memory it did not write then shows up as NaN.
// An allocation that fails (after emptying the cache) throws AllocError, never a bare
// std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"

namespace graft {

// An allocation failed: "[alloc] cannot allocate 4398046511104 bytes (4.0 TiB) for ones
// f32[1099511627776]: out of memory". A graft::Error, so callers that catch those see it;
// a distinct type so a caller can tell running out of memory from misuse.
class AllocError : public Error {
 public:
  AllocError(size_t bytes, std::string_view what);
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
};

// "4.0 TiB", "512 B": a byte count for messages.
std::string bytes_str(double bytes);

class Buffer {
 public:
  // Allocates `bytes` (uninitialized). Throws AllocError on failure, naming `what` (who
  // asked: "ones f32[8]", "the output f32[8] of exp") when given.
  explicit Buffer(size_t bytes, std::string_view what = {});
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }

  static std::shared_ptr<Buffer> make(size_t bytes, std::string_view what = {}) {
    return std::make_shared<Buffer>(bytes, what);
  }

  // A window of `bytes` at `offset` into `parent`, which it keeps alive: no copy (scan hands
  // its body each iteration's x slice this way). Read-only: no kernel writes into a view in
  // place (Call::out_raw never takes one over). `offset` must keep 64-byte alignment.
  struct ViewOf {
    std::shared_ptr<const Buffer> parent;
    size_t offset, bytes;
  };
  explicit Buffer(ViewOf v);
  static std::shared_ptr<Buffer> view(std::shared_ptr<const Buffer> parent, size_t offset,
                                      size_t bytes) {
    return std::make_shared<Buffer>(ViewOf{std::move(parent), offset, bytes});
  }
  bool is_view() const { return parent_ != nullptr; }

  // Memory another backend owns (a GPU's, from its caching allocator): `data` is a device
  // address, never read or written on the host; `release(data, bytes, device)` gives it back
  // when the buffer dies (it must not throw).
  struct DeviceMemory {
    void* data;
    size_t bytes;
    int device;  // the backend's device ordinal (CUDA: the cudaSetDevice number)
    void (*release)(void* data, size_t bytes, int device);
  };
  explicit Buffer(DeviceMemory m);
  // Host memory (every buffer but DeviceMemory ones, and views of those).
  bool on_host() const { return device_ < 0; }
  // The DeviceMemory's device, or -1 on the host.
  int device() const { return device_; }

  // The cache of freed large blocks: bytes it holds now, and emptying it (returns the
  // memory to the system).
  static size_t cached_bytes();
  static void release_cached();

  // The allocator's counters for host memory: bytes held by live buffers (as allocated,
  // rounded up; views and the cache of freed blocks not counted), and the most they held since
  // the last reset_peak_bytes() (or the start), the high-water mark. Process-wide: virtual
  // devices share the process's memory.
  static size_t live_bytes();
  static size_t peak_bytes();
  static void reset_peak_bytes();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t capacity_ = 0;  // bytes actually allocated (rounded up); 0 for a view
  std::shared_ptr<const Buffer> parent_;  // a view's owner
  int device_ = -1;                       // DeviceMemory: its device
  void (*release_)(void*, size_t, int) = nullptr;
};

}  // namespace graft
