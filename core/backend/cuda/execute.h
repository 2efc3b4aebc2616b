// Running programs on one GPU: the CPU backend's executor and buffer plan
// (core/backend/cpu/executable.h) with each instruction run by the CUDA kernel table on the
// device's compute stream. Operands in host memory (host arguments, a program's constants)
// are copied to the device; constants once per device (kept while their host buffer lives).
// Built only with --config=cuda.
#pragma once

#include <cstddef>

#include "core/backend/cpu/executable.h"
#include "core/backend/cuda/epilogue_run.h"
#include "core/primitives/control.h"

namespace graft::cuda {

// A copy of host memory `host` on `device` (synchronous).
std::shared_ptr<Buffer> upload(int device, const Buffer& host);

// `args` as execute's (moved from; given back on a throw). `epilogues` (p's, from
// plan_epilogues; optional): its dot + bias + relu / gelu chains run as one GEMM each.
Buffers execute_on(int device, const Program& p, const BufferPlan& plan, Buffers& args,
                   const EpiloguePlan* epilogues = nullptr);

// A control or call primitive's body i on `device` (cpu::run_body's contract).
Buffers run_body_on(int device, const ControlPrimitive& p, size_t i, Buffers args,
                    size_t first_donated = static_cast<size_t>(-1));

}  // namespace graft::cuda
