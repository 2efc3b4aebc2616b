// What every oneDNN user in the CPU backend shares: the engine, and execution of a created
// primitive with a user-owned scratchpad.
//
// oneDNN's default ("library") scratchpad is owned by the primitive, so executing one cached
// primitive from two threads at once makes them share scratch memory and corrupts both
// results (seen: eight threads doing one matmul shape got 2.7e31 instead of 4078.8).
// Primitives created with user_scratchpad_attr() take their scratch memory at execution;
// execute_primitive() gives each calling thread its own, so a created primitive may run on
// any number of threads at once.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "oneapi/dnnl/dnnl.hpp"

namespace graft::cpu {

dnnl::engine& onednn_engine();  // the CPU engine (created once, never destroyed)

// The attributes every cached primitive is created with (scratchpad_mode::user).
dnnl::primitive_attr user_scratchpad_attr();

// Runs `prim` on this thread's stream with `args` plus a scratchpad of `scratch_bytes`
// (from the primitive descriptor's scratchpad_desc()) owned by this thread, and waits.
void execute_primitive(const dnnl::primitive& prim, size_t scratch_bytes,
                       std::unordered_map<int, dnnl::memory> args);

}  // namespace graft::cpu
