// Which dot_generals of a program (one level, as jit's passes left it) a GEMM epilogue can
// finish: a bias added along the rows and / or an activation (relu, or gelu's tanh
// approximation), as cuBLASLt's BIAS / RELU / RELU_BIAS / GELU / GELU_BIAS epilogues do
// (core/backend/cuda/runtime/blaslt_matmul.h). The matcher is plain C++ over the IR so that
// CPU tests (tests/core/backend/epilogue:matmul_epilogue_test) check what it takes and refuses.
//
// A match is a dot_general d = x @ w (no batch dims: x [M, K], w [K, N] -> d [M, N], all
// of one floating dtype), then optionally h = add(d, broadcast_in_dim(b [N] -> [M, N], dims
// (1))) (either operand order; else h = d), then optionally an activation of h:
//   relu:  max(h, 0) (either order), or nn::relu's custom_jvp_call whose fun is that max
//   gelu:  nn::gelu(h) with approximate = true, as it is written:
//          (0.5 * h) * (1 + tanh(sqrt(2/pi) * (h + ((0.044715 * h) * h) * h)))
//          (each add / mul in either operand order; the constants to the dtype's precision)
// in the forms jit produces: unfused instructions, one fused_elementwise whose whole body is
// those steps (with one output), or a fused_elementwise of the bias add alone followed by the
// unfused activation (nn::relu's call). b has d's dtype and its broadcast is read by the add alone;
// constants are scalars or arrays of one value (broadcast or converted). Anything else is left
// alone: a dot, h or step value read outside the chain or returned by the program, a bias of
// another shape, dims or dtype, a group doing more than the epilogue, batched dot_generals.
// nn::gelu's exact form (erf) is not matched: cuBLASLt's GELU epilogue is the tanh
// approximation, and the two differ by up to about 1e-3.
#pragma once

#include <vector>

#include "core/ir/program.h"

namespace graft {

struct MatmulEpilogue {
  int dot = -1;   // the dot_general's instruction index
  int bias = -1;  // the bias vector's value id (-1: no bias)
  enum class Activation { kNone, kRelu, kGelu };
  Activation activation = Activation::kNone;
  int result = -1;  // the instruction whose single output the epilogue's GEMM gives
  // The instructions besides the dot whose work the epilogue does (the broadcast, the add,
  // the activation's steps or the fused group), ascending.
  std::vector<int> absorbed;
};

// The matches, by ascending dot index; no instruction is in two.
std::vector<MatmulEpilogue> match_matmul_epilogues(const Program& p);

}  // namespace graft
