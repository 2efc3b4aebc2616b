// Side effects while tracing: a side-effecting node (debug_print, a callback) bound on
// tracers is recorded with the collector installed, so jit's tracing and trace_closed keep
// it in the program even when its outputs are unused.
#pragma once

#include <vector>

#include "core/array.h"

namespace graft {

// Installs `collector` for this thread (null: none) and returns the previous one.
std::vector<Array>* set_effect_collector(std::vector<Array>* collector);
// Appends `a` to this thread's collector, if one is installed.
void record_effect(const Array& a);

}  // namespace graft
