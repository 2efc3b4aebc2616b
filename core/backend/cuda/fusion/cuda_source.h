// The CUDA C++ source of one kernel for a fused_elementwise group (core/primitives/fusion.h):
// a grid-stride loop over the group's elements that loads each input (a broadcast scalar
// once, before the loop; an input broadcast from a smaller array at (i / div) % size, see
// FusedRead), evaluates the steps in order in registers and stores the outputs.
// Values are held as the CPU backend holds them (core/backend/cpu/fusion_kernels.cc): f32,
// f16 and bf16 in float lanes, carried in f32 and rounded where the CPU rounds them (at
// explicit converts and on store: core/primitives/fusion.h's rounds_to_half); f64 in double lanes;
// bool in bool lanes (0 / 1 bytes in memory); integers in their own type with XLA's wrapping
// semantics. Exact ops give the CPU's bits (device_exact.cuh), transcendental ones call CUDA's
// accurate libdevice functions (device_math.cuh).
//
// Plain C++: no CUDA headers, so the CPU build compiles and tests it too. NVRTC compiles the
// text (nvrtc_compile.h) with -default-device and without fast math or FMA contraction.
//
// The kernel is extern "C" kKernelName(long long n, <inputs>, <outputs>): one pointer per group
// input then one per output, typed by dtype (f16 / bf16 as unsigned short, bool as unsigned
// char); a broadcast scalar input points at its one value. An output may share its buffer
// with an input (donation): each element's inputs are loaded before its outputs are stored.
//
// Thread-safe (pure functions). Errors: graft::Error "[cuda] fused_elementwise: ...".
#pragma once

#include <string>
#include <vector>

#include "core/dtype/dtype.h"
#include "core/primitives/fusion.h"
#include "core/primitives/list.h"

namespace graft::cuda::fusion {

inline constexpr const char* kKernelName = "graft_fused_elementwise";

// What a kernel computes, apart from graft's IR (so tests can also describe integer groups,
// which jit's fusion pass does not form). Slots as in FusedStep: [0, inputs.size()) are the
// inputs, inputs.size() + k is step k's result.
struct GroupSpec {
  struct Step {
    PrimitiveId op;
    std::vector<int> args;
    DType dtype;  // the result's (a convert's target)
  };
  std::vector<DType> inputs;
  std::vector<bool> scalar;  // input i is one value broadcast to every element
  std::vector<Step> steps;
  std::vector<int> outputs;  // slots
  // Empty, or per input: a FusedRead with size > 0 for an input broadcast from a smaller array
  // (read at element (i / div) % size), size 0 for one read at i or a scalar.
  std::vector<FusedRead> broadcast;
};

// The group's spec: its input dtypes, scalar and broadcast inputs (FusedRead, as the CPU
// kernel reads them), steps and outputs.
GroupSpec spec_of(const FusedElementwise& f);

// A short string that identifies the kernel a group compiles to: equal keys, equal sources.
std::string structure_key(const GroupSpec& g);
std::string structure_key(const FusedElementwise& f);

// The kernel's source. Fails with "no CUDA source for <op>" for a step whose primitive has
// none (not a fusible elementwise op), and on a malformed spec (wrong arity or dtypes).
std::string cuda_source(const GroupSpec& g);
std::string cuda_source(const FusedElementwise& f);

// Whether a CUDA source exists for `op` (the elementwise ops, select_n and converts).
bool has_cuda_source(PrimitiveId op);

}  // namespace graft::cuda::fusion
