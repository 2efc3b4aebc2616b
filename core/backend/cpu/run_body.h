// Runs a body of a primitive that holds programs (control flow, calls) through the executor
// (executable.h), with a buffer plan made on first use and kept with the primitive
// (ControlPrimitive::backend_data), so a loop plans its body once.
#pragma once

#include <cstddef>

#include "core/backend/backend.h"
#include "core/backend/cpu/executable.h"
#include "core/primitives/control.h"

namespace graft::cpu {

// `args`: one buffer per body input; returns one per body output. Inputs from
// `first_donated` on are the kernel's to give (a scan's carries and x slices, a while body's
// carries): the body may compute in place into them when `args` holds their only reference.
// A kernel passes the same `first_donated` for a body on every call (the plan is kept).
// Never for fused_elementwise: its backend-data slot 0 holds its compiled loop, not a plan.
// Another backend's kernels run bodies through here too, with its own `run` (executable.h);
// the plan kept with the primitive does not depend on who runs it.
// `dests`: as execute's (buffers a body's outputs may be computed into).
Buffers run_body(const ControlPrimitive& p, size_t i, Buffers args,
                 size_t first_donated = static_cast<size_t>(-1), InstrRunner run = nullptr,
                 const void* ctx = nullptr, const Buffers* dests = nullptr);

}  // namespace graft::cpu
