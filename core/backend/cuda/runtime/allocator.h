// Device memory: a per-device caching allocator (cudaMalloc'd blocks, never managed memory)
// and host <-> device copies.
//
// Sizes are rounded to a size class: requests up to 1 MiB to a multiple of 512 B, larger ones
// to a multiple of 2 MiB. A freed block goes to its device's free list for its size class and
// is handed out again to a later request of the same class; it is never returned to CUDA
// except by release_cached() or when an allocation runs out of memory (the cache is released
// and the cudaMalloc retried once; if that fails too: graft::AllocError).
//
// Stream order: reuse is safe for work on the device's compute stream (stream.h) only. A block
// freed while kernels on the compute stream still use it may be handed out at once, because
// whatever the next owner enqueues on that same stream runs after those kernels. Work on any
// other stream must be synchronized with the compute stream (an event it waits on, or a
// stream synchronize) before its memory is freed, or before it uses memory allocated for the
// compute stream.
//
// Threading: every function is thread-safe (one mutex per device).
// Errors: a bad device or no GPU: graft::Error "[cuda] ..."; out of memory: graft::AllocError.
// Built only with --config=cuda.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include <cuda_runtime_api.h>

#include "core/buffer.h"

namespace graft::cuda {

// A Buffer (Buffer::DeviceMemory) of `bytes` on `device`; its destructor returns the block to
// the cache (never throws). `what` names the requester in an AllocError.
std::shared_ptr<Buffer> allocate_buffer(int device, size_t bytes, std::string_view what = {});

// A raw block (never null, also for 0 bytes). Give it back with free_raw(device, p, bytes),
// the same `bytes` it was asked for.
void* allocate_raw(int device, size_t bytes);
void free_raw(int device, void* p, size_t bytes);

// Bytes in the device's free lists, and bytes handed out and not yet freed (both counted in
// size classes, i.e. rounded up).
size_t cached_bytes(int device);
size_t bytes_in_use(int device);
// Returns the device's cached blocks to CUDA (synchronizes the device first, so work still
// using a just-freed block finishes before the memory goes).
void release_cached(int device);

// The size class of a request (what the allocator really takes for it).
size_t rounded_size(size_t bytes);

// Copies enqueued on `stream` (host memory must stay valid until the copy is done; pageable
// host memory makes CUDA copy synchronously anyway). The _sync variants wait for the stream.
void copy_to_device(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream);
void copy_to_host(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream);
void copy_to_device_sync(int device, void* dst, const void* src, size_t bytes,
                         cudaStream_t stream);
void copy_to_host_sync(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream);

}  // namespace graft::cuda
