// Which dot_generals of a program (one level, as jit's passes left it) a GEMM epilogue can
// finish: a bias added along the rows and / or relu, as cuBLASLt's BIAS / RELU / RELU_BIAS
// epilogues do (core/backend/cuda/runtime/blaslt_matmul.h). The matcher is plain C++ over the
// IR so that CPU tests (tests/core:matmul_epilogue_test) check what it takes and refuses.
//
// A match is a dot_general d = x @ w (no batch dims: x [M, K], w [K, N] -> d [M, N], all
// of one floating dtype) whose value only one instruction reads, followed by, in either form jit
// produces:
//   unfused:  add(d, broadcast_in_dim(b [N] -> [M, N], dims (1))) (either operand order),
//             optionally read only by max(., 0)
//             or just max(d, 0)
//   fused:    a fused_elementwise whose whole body is those steps, with one output
// where b has d's dtype, the broadcast's value is read by that add alone, and 0 is a
// constant zero (a scalar, or an array of zeros). Anything else is left alone: a dot whose
// value is read twice or is a program output, a bias of another shape, dims or dtype, a
// broadcast read elsewhere, a group doing more than the epilogue.
//
// Not matched yet: gelu (graft spells it as a chain of elementwise ops, nn::gelu; matching
// that chain is missing), batched dot_generals, relu through nn::relu's custom_jvp call.
#pragma once

#include <vector>

#include "core/ir/program.h"

namespace graft {

struct MatmulEpilogue {
  int dot = -1;   // the dot_general's instruction index
  int bias = -1;  // the bias vector's value id (-1: no bias)
  bool relu = false;
  int result = -1;  // the instruction whose single output the epilogue's GEMM gives
  // The instructions besides the dot whose work the epilogue does (the broadcast, the add,
  // the max or the fused group), ascending.
  std::vector<int> absorbed;
};

// The matches, by ascending dot index; no instruction is in two.
std::vector<MatmulEpilogue> match_matmul_epilogues(const Program& p);

}  // namespace graft
