// Eager evaluation through the backend seam: a pending node runs as a one-equation Program,
// compiled by the backend once per (primitive parameters, input avals) and cached, so a
// backend needs only compile and run, and a GPU backend can cache its kernels per shape.
#pragma once

#include "core/array.h"
#include "core/backend/backend.h"

namespace graft {

// Computes pending node `n` (its inputs evaluated) with `host`, or with the device backend
// when an input lives in a GPU's memory (backend_for), and stores its buffers.
void run_eager(const Backend& host, Node& n);

// Executables in the eager cache (for tests: the same op on the same avals compiles once).
size_t eager_cache_size();

}  // namespace graft
