// Runs a body of a primitive that holds programs (control flow, calls) on evaluated arrays
// through the executor (executable.h), with a buffer plan made on first use and kept with the
// primitive (ControlPrimitive::backend_data), so a loop plans its body once.
#pragma once

#include <cstddef>
#include <vector>

#include "core/primitives/control.h"

namespace graft::cpu {

std::vector<Array> run_body(const ControlPrimitive& p, size_t i, const std::vector<Array>& args);

}  // namespace graft::cpu
