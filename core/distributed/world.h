// The process world of a multi-process run (jax.distributed): process index and count live in
// core/device/device.h; this is what processes do together outside a program's collectives.
//
// Threads: barrier may be called from any one thread of each process at a time (the
// checkpoint writer calls it from its background thread); every process must make the same
// barrier calls in the same order.
#pragma once

#include "absl/status/status.h"

namespace graft::distributed {

// Returns once every process has called it with the same `name` (a no-op in a one-process
// run). An error (a process gone, a timeout) is Unavailable naming `name`.
absl::Status barrier(const char* name);

}  // namespace graft::distributed
