// Intra-op parallelism: a fixed pool of worker threads sized to the machine
// (GRAFT_NUM_THREADS overrides). parallel_for splits [0, n) into contiguous chunks of at
// least `grain` items; the caller runs one chunk itself. Nested calls run serially.
#pragma once

#include <cstdint>
#include <functional>

namespace graft::cpu {

int num_threads();

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// parallel_for whose chunks start at multiples of `align` items. Elementwise kernels align to
// 64 elements, a multiple of every packet width, so which elements a vectorized path computes
// (and so their bits, where packet and scalar code differ) does not depend on the thread count.
void parallel_for_aligned(int64_t n, int64_t grain, int64_t align,
                          const std::function<void(int64_t, int64_t)>& fn);

}  // namespace graft::cpu
