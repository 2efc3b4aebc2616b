// Eager evaluation through the backend seam: a pending node runs as a one-equation Program,
// compiled by the backend once per (primitive parameters, input avals) and cached, so a
// backend needs only compile and run, and a GPU backend can cache its kernels per shape.
#pragma once

#include "core/array.h"
#include "core/backend/backend.h"

namespace graft {

// Computes pending node `n` (its inputs evaluated) with `backend` and stores its buffers.
void run_eager(const Backend& backend, Node& n);

// Executables in the eager cache (for tests: the same op on the same avals compiles once).
size_t eager_cache_size();

}  // namespace graft
