// The calls the base types make into the layers above them: evaluating pending arrays
// (eval, Array::item...), copying a buffer in device memory to the host
// (Array::host_buffer) and counting the device backend's GPUs (devices("cuda")).
//
// The base (dtype, shape, buffer, array, device) cannot include the backend seam
// (core/backend/backend.h), which sits above the program IR; //core/backend installs these
// when it is linked (every program linking //core has it). Without it each call fails with a
// graft::Error naming what to link.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "core/buffer.h"

namespace graft {

struct Runtime {
  // Computes the pending part of the graph below `arrays`.
  void (*eval)(const std::vector<Array>& arrays) = nullptr;
  // `b` itself when it is host memory, else a host copy (gathered if it is sharded).
  std::shared_ptr<const Buffer> (*to_host)(const std::shared_ptr<Buffer>& b) = nullptr;
  // The device backend's GPUs (0 when none is linked).
  int (*gpu_count)() = nullptr;
};

// Installs the runtime (once, from a static initializer of //core/backend).
bool install_runtime(const Runtime& runtime);
// The installed runtime; graft::Error "[<op>] ..." when none is.
const Runtime& runtime(const char* op);

}  // namespace graft
