// How the shared control-flow kernels (core/backend/control_kernels.h) run on the CPU: bodies
// through run_body, slices in host memory, copies over the intra-op pool (one thread's memcpy
// does not reach the memory bandwidth).
#pragma once

#include <cstring>

#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/run_body.h"

namespace graft::cpu {

struct HostControl {
  Buffers run_body(const ControlPrimitive& p, size_t i, Buffers args, size_t first_donated,
                   const Buffers* dests = nullptr) const {
    return cpu::run_body(p, i, std::move(args), first_donated, nullptr, nullptr, dests);
  }
  std::shared_ptr<Buffer> allocate(size_t bytes) const { return Buffer::make(bytes); }
  void copy(void* dst, const void* src, size_t n) const {
    constexpr int64_t kGrain = 1 << 18;
    auto* to = static_cast<char*>(dst);
    const auto* from = static_cast<const char*>(src);
    parallel_for(static_cast<int64_t>(n), kGrain, [&](int64_t b, int64_t e) {
      std::memcpy(to + b, from + b, static_cast<size_t>(e - b));
    });
  }
};

}  // namespace graft::cpu
